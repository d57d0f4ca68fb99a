// SPDX-License-Identifier: BSD-3-Clause
// End-to-end proof of the point-to-point forward replay: hand-timed Late Sender, wrong-order and
// Late Receiver scenarios checked against scalasca-metrics.md §5 and §6.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "tests/e2e/scenario.hpp"

namespace cpreplay::testing {
namespace {

using scenario::at;
using scenario::kTol;

const std::string kMain = "sim.exe/main";
const std::string kRecv = kMain + "/MPI_Recv";
const std::string kSend = kMain + "/MPI_Send";

// ---- Late Sender (§5.1) ---------------------------------------------------------------------

// Rank 0 sends at [1, 1.1]; rank 1 enters MPI_Recv only at 2 and leaves at 2.1.
// idle = min(es, lr) - er = min(1, 2.1) - 2 = -1 -> no Late Sender and no instance.
// Late Receiver on rank 0: lc = 1.1 <= eq = 2 -> 0.
// Counters: 64 bytes > 0 -> comms_recv = 1, bytes_rcvd = 64 at rank 1's MPI_Recv.
TEST(LateSender, RecvPostedAfterSendArrived_NoWait) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  w.send(0, 1.0, 1.1, /*dest=*/1, /*tag=*/0, /*bytes=*/64);
  w.region(1, "work", 0.5, 2.0);
  w.recv(1, 2.0, 2.1, /*src=*/0, /*tag=*/0, /*bytes=*/64);
  scenario::close_all(w, 3.0);
  const CubeFile cube = scenario::analyze(w, dir);
  EXPECT_EQ(at(cube, "mpi_latesender", kRecv, 1), 0.0);
  EXPECT_EQ(at(cube, "mpi_cls_count", kRecv, 1), 0.0);
  EXPECT_EQ(at(cube, "mpi_sls_count", kRecv, 1), 0.0);
  EXPECT_EQ(at(cube, "mpi_latereceiver", kSend, 0), 0.0);
  EXPECT_EQ(at(cube, "comms_recv", kRecv, 1), 1.0);
  EXPECT_EQ(at(cube, "bytes_rcvd", kRecv, 1), 64.0);
  EXPECT_EQ(at(cube, "comms_send", kSend, 0), 1.0);
  EXPECT_EQ(at(cube, "bytes_sent", kSend, 0), 64.0);
}

// The §5.1 example with the sender's clock ahead: rank 1 is in MPI_Recv [1, 5.2], rank 0 enters
// MPI_Send at 6 (send event at 6 > receive event at 5.2: one P2P clock-condition violation).
// idle = min(es, lr) - er = min(6, 5.2) - 1 = 4.2 (clipped at the receive's Leave).
// Late Receiver on rank 0: ec = 6, lc = 6.1, eq = 1 -> lc > eq, idle = eq - ec = -5 -> 0.
// The run must succeed: the violation is counted and reported once as a warning, not fatal (§10).
TEST(LateSender, SenderClockAheadOfReceiver_ClippedAtRecvLeave) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  w.region(0, "work", 0.5, 6.0);
  w.send(0, 6.0, 6.1, 1, 0, 64);
  w.region(1, "work", 0.5, 1.0);
  w.recv(1, 1.0, 5.2, 0, 0, 64);
  scenario::close_all(w, 7.0);
  RunResult run;
  const CubeFile cube = scenario::analyze(w, dir, {}, "t", &run);
  EXPECT_NE(run.err.find("clock-condition violation"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("1 point-to-point"), std::string::npos) << run.err;
  EXPECT_NEAR(at(cube, "mpi_latesender", kRecv, 1), 4.2, kTol);
  EXPECT_EQ(at(cube, "mpi_cls_count", kRecv, 1), 1.0);
  EXPECT_EQ(at(cube, "mpi_latereceiver", kSend, 0), 0.0);
  EXPECT_EQ(at(cube, "mpi_latesender", kRecv, 0), 0.0);
}

// MPI_Sendrecv on both ranks, each with its MpiSend at the call's Enter.
// Rank 0: Sendrecv [1, 4]; rank 1: Sendrecv [3, 3.5].
// Rank 0 receives rank 1's message: idle = min(3, 4) - 1 = 2 -> LS 2 at MPI_Sendrecv.
// Rank 1 receives rank 0's message: idle = min(1, 3.5) - 3 < 0 -> 0.
// Late Receiver: rank 0's send would have ec = 1 < eq = 3 < lc = 4 (idle 2), but a send in
// MPI_Sendrecv never gives Late Receiver (§5.3) -> 0.
TEST(LateSender, Sendrecv_ReportsGapAtSendrecv) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  w.region(0, "work", 0.5, 1.0);
  w.enter(0, 1.0, "MPI_Sendrecv");
  w.mpi_send(0, 1.0, 1, 0, 32);
  w.mpi_recv(0, 4.0, 1, 0, 32);
  w.leave(0, 4.0, "MPI_Sendrecv");
  w.region(1, "work", 0.5, 3.0);
  w.enter(1, 3.0, "MPI_Sendrecv");
  w.mpi_send(1, 3.0, 0, 0, 32);
  w.mpi_recv(1, 3.5, 0, 0, 32);
  w.leave(1, 3.5, "MPI_Sendrecv");
  scenario::close_all(w, 5.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string sendrecv = kMain + "/MPI_Sendrecv";
  EXPECT_NEAR(at(cube, "mpi_latesender", sendrecv, 0), 2.0, kTol);
  EXPECT_EQ(at(cube, "mpi_latesender", sendrecv, 1), 0.0);
  EXPECT_EQ(at(cube, "mpi_cls_count", sendrecv, 0), 1.0);
  EXPECT_EQ(at(cube, "mpi_latereceiver", sendrecv, 0), 0.0);
  EXPECT_EQ(at(cube, "mpi_latereceiver", sendrecv, 1), 0.0);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(at(cube, "comms_send", sendrecv, r), 1.0);
    EXPECT_EQ(at(cube, "comms_recv", sendrecv, r), 1.0);
    EXPECT_EQ(at(cube, "bytes_sent", sendrecv, r), 32.0);
    EXPECT_EQ(at(cube, "bytes_rcvd", sendrecv, r), 32.0);
  }
}

// Rank 1: MPI_Irecv [1, 1.1] (request), MPI_Wait [2, 5.1] holding the MpiIrecv completion.
// Rank 0: MPI_Send [5, 5.1].
// er is the Enter of MPI_Wait (the Irecv call plays no role): idle = min(5, 5.1) - 2 = 3 at
// sim.exe/main/MPI_Wait. The receive counters also go to MPI_Wait (cnode of the MpiIrecv).
// Late Receiver: eq = Enter of MPI_Irecv = 1 < ec = 5 -> 0.
TEST(LateSender, IrecvThenWait_ReportsGapAtWait) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  w.region(0, "work", 0.5, 5.0);
  w.send(0, 5.0, 5.1, 1, 3, 16);
  w.enter(1, 1.0, "MPI_Irecv");
  w.mpi_irecv_request(1, 1.0, /*request=*/9);
  w.leave(1, 1.1, "MPI_Irecv");
  w.region(1, "work", 1.1, 2.0);
  w.enter(1, 2.0, "MPI_Wait");
  w.mpi_irecv(1, 5.1, 0, 3, 16, 9);
  w.leave(1, 5.1, "MPI_Wait");
  scenario::close_all(w, 6.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string wait = kMain + "/MPI_Wait", irecv = kMain + "/MPI_Irecv";
  EXPECT_NEAR(at(cube, "mpi_latesender", wait, 1), 3.0, kTol);
  EXPECT_EQ(at(cube, "mpi_latesender", irecv, 1), 0.0);
  EXPECT_EQ(at(cube, "mpi_cls_count", wait, 1), 1.0);
  EXPECT_EQ(at(cube, "comms_recv", wait, 1), 1.0);
  EXPECT_EQ(at(cube, "bytes_rcvd", wait, 1), 16.0);
  EXPECT_EQ(at(cube, "comms_recv", irecv, 1), 0.0);
  EXPECT_EQ(at(cube, "mpi_latereceiver", kSend, 0), 0.0);
}

// Rank 3 posts MPI_Irecv from ranks 0, 1, 2 at 0.5, 0.6, 0.7, then MPI_Waitall [1, 6] completes
// all three. The senders enter MPI_Send at 2, 5, 3.
// idles = min(es, 6) - 1 = 1, 4, 2 -> only the maximum, 4, counts, once.
// A second round: Irecvs at 6.5, 6.6, 6.7, MPI_Waitall [7, 10], sends entered at 9, 8, 7.5:
// idles = 2, 1, 0.5 -> 2, once. At sim.exe/main/MPI_Waitall: LS = 4 + 2 = 6,
// mpi_cls_count = 2, while comms_recv = 6, bytes_rcvd = 6 * 64.
// Wrong order: the first call's entry (send at 5) precedes receives sent at 9, 8, 7.5 (all
// later), and the second call's entry is followed by no receive: none.
TEST(LateSender, WaitallThreeIrecvs_MaximumCountsOncePerCall) {
  TempDir dir;
  TraceWriter w(4);
  scenario::open_all(w);
  const double send_enter[2][3] = {{2.0, 5.0, 3.0}, {9.0, 8.0, 7.5}};
  for (int r = 0; r < 3; ++r) {
    w.region(r, "work", 0.5, send_enter[0][r]);
    w.send(r, send_enter[0][r], send_enter[0][r] + 0.1, 3, 0, 64);
    w.region(r, "work", send_enter[0][r] + 0.1, send_enter[1][r]);
    w.send(r, send_enter[1][r], send_enter[1][r] + 0.1, 3, 0, 64);
  }
  const double post[2] = {0.5, 6.5}, wait_enter[2] = {1.0, 7.0}, wait_leave[2] = {6.0, 10.0};
  for (int round = 0; round < 2; ++round) {
    for (int src = 0; src < 3; ++src) {
      const double t = post[round] + 0.1 * src;
      w.enter(3, t, "MPI_Irecv");
      w.mpi_irecv_request(3, t, 100 + src);
      w.leave(3, t + 0.05, "MPI_Irecv");
    }
    w.enter(3, wait_enter[round], "MPI_Waitall");
    for (int src = 0; src < 3; ++src) w.mpi_irecv(3, wait_leave[round], src, 0, 64, 100 + src);
    w.leave(3, wait_leave[round], "MPI_Waitall");
  }
  scenario::close_all(w, 11.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string waitall = kMain + "/MPI_Waitall";
  EXPECT_NEAR(at(cube, "mpi_latesender", waitall, 3), 6.0, kTol);
  EXPECT_EQ(at(cube, "mpi_cls_count", waitall, 3), 2.0);
  EXPECT_EQ(at(cube, "mpi_sls_count", waitall, 3), 0.0);
  EXPECT_EQ(at(cube, "comms_recv", waitall, 3), 6.0);
  EXPECT_EQ(at(cube, "bytes_rcvd", waitall, 3), 384.0);
  EXPECT_EQ(at(cube, "mpi_latesender_wo", waitall, 3), 0.0);
  EXPECT_NEAR(scenario::total(cube, "mpi_latesender"), 6.0, kTol);
  EXPECT_EQ(scenario::total(cube, "mpi_latereceiver"), 0.0);
}

// MPI_Waitany is a single wait, MPI_Waitsome a multi wait (§2.3, §5.1). Rank 2:
// MPI_Irecv from 0 at 0.5, MPI_Waitany [1, 3.1]; rank 0 sends at [3, 3.1] -> LS = 3 - 1 = 2.
// MPI_Irecv from 0 and from 1 at 4, 4.1, MPI_Waitsome [5, 9] completing both; rank 0 sends at
// [8, 8.1], rank 1 at [7, 7.1] -> idles 3 and 2, only the maximum once: LS = 3, one instance.
TEST(LateSender, WaitanyAndWaitsome_SingleAndMultiWaitRules) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  w.region(0, "work", 0.5, 3.0);
  w.send(0, 3.0, 3.1, 2, 0, 8);
  w.region(0, "work", 3.1, 8.0);
  w.send(0, 8.0, 8.1, 2, 0, 8);
  w.region(1, "work", 0.5, 7.0);
  w.send(1, 7.0, 7.1, 2, 0, 8);
  w.enter(2, 0.5, "MPI_Irecv");
  w.mpi_irecv_request(2, 0.5, 1);
  w.leave(2, 0.6, "MPI_Irecv");
  w.enter(2, 1.0, "MPI_Waitany");
  w.mpi_irecv(2, 3.1, 0, 0, 8, 1);
  w.leave(2, 3.1, "MPI_Waitany");
  for (int src = 0; src < 2; ++src) {
    w.enter(2, 4.0 + 0.1 * src, "MPI_Irecv");
    w.mpi_irecv_request(2, 4.0 + 0.1 * src, 2 + src);
    w.leave(2, 4.05 + 0.1 * src, "MPI_Irecv");
  }
  w.enter(2, 5.0, "MPI_Waitsome");
  w.mpi_irecv(2, 9.0, 0, 0, 8, 2);
  w.mpi_irecv(2, 9.0, 1, 0, 8, 3);
  w.leave(2, 9.0, "MPI_Waitsome");
  scenario::close_all(w, 10.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string waitany = kMain + "/MPI_Waitany", waitsome = kMain + "/MPI_Waitsome";
  EXPECT_NEAR(at(cube, "mpi_latesender", waitany, 2), 2.0, kTol);
  EXPECT_EQ(at(cube, "mpi_cls_count", waitany, 2), 1.0);
  EXPECT_NEAR(at(cube, "mpi_latesender", waitsome, 2), 3.0, kTol);
  EXPECT_EQ(at(cube, "mpi_cls_count", waitsome, 2), 1.0);
  EXPECT_EQ(at(cube, "comms_recv", waitsome, 2), 2.0);
  EXPECT_EQ(scenario::total(cube, "mpi_latesender_wo"), 0.0);
}

// Rank 1 posts two Irecvs from rank 0 (tags 1, 2) and completes them in MPI_Test calls:
// an incomplete MPI_Test [2, 2.1] (MpiRequestTested), MPI_Test [4, 5.2] completing tag 1, and
// MPI_Testall [6, 7.2] completing tag 2. Rank 0 sends tag 1 at [5, 5.1] and tag 2 at [7, 7.1].
// Were these waits, idle = min(5, 5.2) - 4 = 1 and min(7, 7.2) - 6 = 1; MPI_Test* completions
// are skipped (§5.1) -> LS 0, no instance. The receives still count (§6): comms_recv 1 each.
TEST(LateSender, CompletedInTestCalls_NoWait) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  w.region(0, "work", 0.5, 5.0);
  w.send(0, 5.0, 5.1, 1, 1, 8);
  w.region(0, "work", 5.1, 7.0);
  w.send(0, 7.0, 7.1, 1, 2, 8);
  w.enter(1, 1.0, "MPI_Irecv");
  w.mpi_irecv_request(1, 1.0, 1);
  w.leave(1, 1.05, "MPI_Irecv");
  w.enter(1, 1.05, "MPI_Irecv");
  w.mpi_irecv_request(1, 1.05, 2);
  w.leave(1, 1.1, "MPI_Irecv");
  w.enter(1, 2.0, "MPI_Test");
  w.request_test(1, 2.05, 1);
  w.leave(1, 2.1, "MPI_Test");
  w.enter(1, 4.0, "MPI_Test");
  w.mpi_irecv(1, 5.2, 0, 1, 8, 1);
  w.leave(1, 5.2, "MPI_Test");
  w.enter(1, 6.0, "MPI_Testall");
  w.mpi_irecv(1, 7.2, 0, 2, 8, 2);
  w.leave(1, 7.2, "MPI_Testall");
  scenario::close_all(w, 8.0);
  const CubeFile cube = scenario::analyze(w, dir);
  for (const std::string call : {"MPI_Test", "MPI_Testall"}) {
    const std::string path = kMain + "/" + call;
    EXPECT_EQ(at(cube, "mpi_latesender", path, 1), 0.0) << call;
    EXPECT_EQ(at(cube, "mpi_cls_count", path, 1), 0.0) << call;
    EXPECT_EQ(at(cube, "comms_recv", path, 1), 1.0) << call;
    EXPECT_EQ(at(cube, "bytes_rcvd", path, 1), 8.0) << call;
  }
  EXPECT_EQ(scenario::total(cube, "mpi_latesender"), 0.0);
}

// Rank 0 sends a 0-byte message (tag 1) at [3, 3.1] and a 128-byte one (tag 2) at [6, 6.1].
// Rank 1 receives them in MPI_Recv [1, 3.2] and [4, 6.2]: idles 3 - 1 = 2 and 6 - 4 = 2, LS = 4.
// Split by the send's bytes (§6): syncs_recv 1 + mpi_sls_count 1 for the 0-byte message,
// comms_recv 1 + mpi_cls_count 1 for the other; bytes_rcvd = 128. Sender: syncs_send 1,
// comms_send 1, bytes_sent 128. In order (send 3 < 6): no wrong order.
TEST(LateSender, ZeroByteMessage_CountsAsSynchronization) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  w.region(0, "work", 0.5, 3.0);
  w.send(0, 3.0, 3.1, 1, 1, 0);
  w.region(0, "work", 3.1, 6.0);
  w.send(0, 6.0, 6.1, 1, 2, 128);
  w.region(1, "work", 0.5, 1.0);
  w.recv(1, 1.0, 3.2, 0, 1, 0);
  w.region(1, "work", 3.2, 4.0);
  w.recv(1, 4.0, 6.2, 0, 2, 128);
  scenario::close_all(w, 7.0);
  const CubeFile cube = scenario::analyze(w, dir);
  EXPECT_NEAR(at(cube, "mpi_latesender", kRecv, 1), 4.0, kTol);
  EXPECT_EQ(at(cube, "syncs_recv", kRecv, 1), 1.0);
  EXPECT_EQ(at(cube, "comms_recv", kRecv, 1), 1.0);
  EXPECT_EQ(at(cube, "mpi_sls_count", kRecv, 1), 1.0);
  EXPECT_EQ(at(cube, "mpi_cls_count", kRecv, 1), 1.0);
  EXPECT_EQ(at(cube, "bytes_rcvd", kRecv, 1), 128.0);
  EXPECT_EQ(at(cube, "syncs_send", kSend, 0), 1.0);
  EXPECT_EQ(at(cube, "comms_send", kSend, 0), 1.0);
  EXPECT_EQ(at(cube, "bytes_sent", kSend, 0), 128.0);
  EXPECT_EQ(at(cube, "mpi_latesender_wo", kRecv, 1), 0.0);
  EXPECT_EQ(at(cube, "mpi_slswo_count", kRecv, 1), 0.0);
  EXPECT_EQ(at(cube, "mpi_clswo_count", kRecv, 1), 0.0);
}

// The receiver records other byte counts than the sender: message A (in region "a") is sent
// with 0 bytes but its MpiRecv says 64; message B (in region "b") is sent with 256 bytes but its
// MpiRecv says 0. Both are late by 1 s (sends at 2 and 4, receives entered at 1 and 3).
// §6 uses the sender's bytes: A -> syncs_recv 1, mpi_sls_count 1, bytes_rcvd 0;
// B -> comms_recv 1, mpi_cls_count 1, bytes_rcvd 256.
TEST(LateSender, ReceiverBytesDiffer_SenderBytesCount) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  w.region(0, "work", 0.5, 2.0);
  w.send(0, 2.0, 2.1, 1, 1, /*bytes=*/0);
  w.region(0, "work", 2.1, 4.0);
  w.send(0, 4.0, 4.1, 1, 2, /*bytes=*/256);
  w.enter(1, 0.9, "a");
  w.recv(1, 1.0, 2.2, 0, 1, /*bytes=*/64);
  w.leave(1, 2.3, "a");
  w.enter(1, 2.9, "b");
  w.recv(1, 3.0, 4.2, 0, 2, /*bytes=*/0);
  w.leave(1, 4.3, "b");
  scenario::close_all(w, 5.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string a = kMain + "/a/MPI_Recv", b = kMain + "/b/MPI_Recv";
  EXPECT_NEAR(at(cube, "mpi_latesender", a, 1), 1.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_latesender", b, 1), 1.0, kTol);
  EXPECT_EQ(at(cube, "syncs_recv", a, 1), 1.0);
  EXPECT_EQ(at(cube, "comms_recv", a, 1), 0.0);
  EXPECT_EQ(at(cube, "mpi_sls_count", a, 1), 1.0);
  EXPECT_EQ(at(cube, "mpi_cls_count", a, 1), 0.0);
  EXPECT_EQ(at(cube, "bytes_rcvd", a, 1), 0.0);
  EXPECT_EQ(at(cube, "syncs_recv", b, 1), 0.0);
  EXPECT_EQ(at(cube, "comms_recv", b, 1), 1.0);
  EXPECT_EQ(at(cube, "mpi_sls_count", b, 1), 0.0);
  EXPECT_EQ(at(cube, "mpi_cls_count", b, 1), 1.0);
  EXPECT_EQ(at(cube, "bytes_rcvd", b, 1), 256.0);
}

// A cancelled send takes no part in matching but still counts as a send (§2.2, §6).
// Rank 0: MPI_Isend to 1 (tag 5, 32 B) [1, 1.1], cancelled in MPI_Wait [2, 2.1]; then MPI_Send
// to 1 (tag 5, 16 B) [4, 4.1]. Rank 1 has a single MPI_Recv (tag 5) [3, 4.2].
// The receive matches the MPI_Send, not the cancelled Isend: LS = min(4, 4.2) - 3 = 1 and
// bytes_rcvd = 16. Sender: comms_send 1 at MPI_Isend (32 B) and 1 at MPI_Send (16 B).
TEST(LateSender, CancelledIsend_NotMatchedButCounted) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  w.enter(0, 1.0, "MPI_Isend");
  w.mpi_isend(0, 1.0, 1, 5, 32, /*request=*/4);
  w.leave(0, 1.1, "MPI_Isend");
  w.enter(0, 2.0, "MPI_Wait");
  w.request_cancelled(0, 2.1, 4);
  w.leave(0, 2.1, "MPI_Wait");
  w.region(0, "work", 2.1, 4.0);
  w.send(0, 4.0, 4.1, 1, 5, 16);
  w.region(1, "work", 0.5, 3.0);
  w.recv(1, 3.0, 4.2, 0, 5, 16);
  scenario::close_all(w, 5.0);
  const CubeFile cube = scenario::analyze(w, dir);
  EXPECT_NEAR(at(cube, "mpi_latesender", kRecv, 1), 1.0, kTol);
  EXPECT_EQ(at(cube, "bytes_rcvd", kRecv, 1), 16.0);
  EXPECT_EQ(at(cube, "comms_recv", kRecv, 1), 1.0);
  EXPECT_EQ(at(cube, "comms_send", kMain + "/MPI_Isend", 0), 1.0);
  EXPECT_EQ(at(cube, "bytes_sent", kMain + "/MPI_Isend", 0), 32.0);
  EXPECT_EQ(at(cube, "comms_send", kSend, 0), 1.0);
  EXPECT_EQ(at(cube, "bytes_sent", kSend, 0), 16.0);
  EXPECT_EQ(scenario::total(cube, "mpi_latereceiver"), 0.0);
}

// Every rank sends a message to itself on MPI_COMM_SELF (peer 0 = itself): MPI_Isend [1, 1.1],
// MPI_Recv [1.2 + r, 1.3 + r], MPI_Wait [2.5, 2.6] for the Isend. Each receive matches its own
// rank's send (not the other rank's, though comm, peer and tag are the same): the send was
// entered at 1 < er, so LS = 0; comms_recv 1 and bytes_rcvd 8 * (r + 1) (the rank's own size).
TEST(LateSender, SendToSelfOnCommSelf_MatchedPerRank) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  for (int r = 0; r < 2; ++r) {
    const std::uint64_t bytes = 8 * (r + 1);
    w.enter(r, 1.0, "MPI_Isend");
    w.mpi_isend(r, 1.0, 0, 3, bytes, 1, w.self());
    w.leave(r, 1.1, "MPI_Isend");
    w.recv(r, 1.2 + r, 1.3 + r, 0, 3, bytes, w.self());
    w.enter(r, 2.5, "MPI_Wait");
    w.mpi_isend_complete(r, 2.6, 1);
    w.leave(r, 2.6, "MPI_Wait");
  }
  scenario::close_all(w, 3.0);
  const CubeFile cube = scenario::analyze(w, dir);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(at(cube, "comms_recv", kRecv, r), 1.0) << "rank " << r;
    EXPECT_EQ(at(cube, "bytes_rcvd", kRecv, r), 8.0 * (r + 1)) << "rank " << r;
    EXPECT_EQ(at(cube, "mpi_latesender", kRecv, r), 0.0) << "rank " << r;
  }
  EXPECT_EQ(scenario::total(cube, "mpi_latereceiver"), 0.0);
}

// ---- Late Sender, wrong order (§5.2) ----------------------------------------------------------

// The §5.2 example. Rank 2 first receives from rank 0 in phase1: MPI_Recv [1, 5.2], rank 0's
// MPI_Send [5, 5.1] -> LS = min(5, 5.2) - 1 = 4, buffered with t(s) = 5.
// Then, in phase2, from rank 1: MPI_Recv [5.3, 5.4], rank 1's MPI_Send [3, 3.1] -> no LS.
// t(s_entry) = 5 > t(s_m') = 3 and the sources differ (0 vs 1): mpi_latesender_wo = 4 and
// mpi_lswo_different = 4 at the *first* receive's call path; mpi_clswo_count = 1 (64 bytes).
TEST(WrongOrder, DifferentSources_ReportedAtFirstReceive) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  w.region(0, "work", 0.5, 5.0);
  w.send(0, 5.0, 5.1, 2, 0, 64);
  w.region(1, "work", 0.5, 3.0);
  w.send(1, 3.0, 3.1, 2, 0, 64);
  w.enter(2, 0.9, "phase1");
  w.recv(2, 1.0, 5.2, 0, 0, 64);
  w.leave(2, 5.25, "phase1");
  w.enter(2, 5.25, "phase2");
  w.recv(2, 5.3, 5.4, 1, 0, 64);
  w.leave(2, 5.45, "phase2");
  scenario::close_all(w, 6.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string first = kMain + "/phase1/MPI_Recv", second = kMain + "/phase2/MPI_Recv";
  EXPECT_NEAR(at(cube, "mpi_latesender", first, 2), 4.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_latesender_wo", first, 2), 4.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_lswo_different", first, 2), 4.0, kTol);
  EXPECT_EQ(at(cube, "mpi_lswo_same", first, 2), 0.0);
  EXPECT_EQ(at(cube, "mpi_cls_count", first, 2), 1.0);
  EXPECT_EQ(at(cube, "mpi_clswo_count", first, 2), 1.0);
  EXPECT_EQ(at(cube, "mpi_slswo_count", first, 2), 0.0);
  EXPECT_EQ(at(cube, "mpi_latesender", second, 2), 0.0);
  EXPECT_EQ(at(cube, "mpi_latesender_wo", second, 2), 0.0);
  EXPECT_EQ(at(cube, "mpi_clswo_count", second, 2), 0.0);
}

// One sender, two tags, received in reverse order. Rank 0: MPI_Send tag 1 (64 B) at [1, 1.1],
// then MPI_Send tag 2 (0 B) at [5, 5.1]. Rank 1: phase1 MPI_Recv(tag 2) [2, 5.2] -> LS =
// min(5, 5.2) - 2 = 3, buffered with t(s) = 5; phase2 MPI_Recv(tag 1) [5.3, 5.4] -> no LS.
// t(s_entry) = 5 > 1, same source rank 0: mpi_latesender_wo = mpi_lswo_same = 3 at phase1;
// the entry's send has 0 bytes -> mpi_sls_count = mpi_slswo_count = 1 there.
// Late Receiver: the tag-1 send left at 1.1 <= eq = 5.3 -> 0.
TEST(WrongOrder, SameSourceTwoTags_ReportedAsSameSource) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  w.send(0, 1.0, 1.1, 1, 1, 64);
  w.region(0, "work", 1.1, 5.0);
  w.send(0, 5.0, 5.1, 1, 2, 0);
  w.enter(1, 1.9, "phase1");
  w.recv(1, 2.0, 5.2, 0, 2, 0);
  w.leave(1, 5.25, "phase1");
  w.enter(1, 5.25, "phase2");
  w.recv(1, 5.3, 5.4, 0, 1, 64);
  w.leave(1, 5.45, "phase2");
  scenario::close_all(w, 6.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string first = kMain + "/phase1/MPI_Recv", second = kMain + "/phase2/MPI_Recv";
  EXPECT_NEAR(at(cube, "mpi_latesender", first, 1), 3.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_latesender_wo", first, 1), 3.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_lswo_same", first, 1), 3.0, kTol);
  EXPECT_EQ(at(cube, "mpi_lswo_different", first, 1), 0.0);
  EXPECT_EQ(at(cube, "mpi_sls_count", first, 1), 1.0);
  EXPECT_EQ(at(cube, "mpi_slswo_count", first, 1), 1.0);
  EXPECT_EQ(at(cube, "mpi_clswo_count", first, 1), 0.0);
  EXPECT_EQ(at(cube, "mpi_latesender", second, 1), 0.0);
  EXPECT_EQ(at(cube, "syncs_recv", first, 1), 1.0);
  EXPECT_EQ(at(cube, "comms_recv", second, 1), 1.0);
  EXPECT_EQ(at(cube, "mpi_latereceiver", kSend, 0), 0.0);
}

// §5.2 compares the *communicator-local* source numbers. Communicator "pair" = world {2, 0},
// so world rank 0 is pair-local rank 1. Rank 2 first receives from pair-local 1 (world 0) on
// "pair": MPI_Recv [1, 5.2], rank 0's MPI_Send [5, 5.1] -> LS 4, entry t(s) = 5, source 1.
// Then from world rank 1 on MPI_COMM_WORLD: MPI_Recv [5.3, 5.4], sent at [3, 3.1] -> no LS.
// 5 > 3: wrong order, and the source numbers are equal (1 == 1) although the processes differ:
// mpi_lswo_same = 4, mpi_lswo_different = 0.
TEST(WrongOrder, EqualLocalSourceOnOtherCommunicator_CountsAsSameSource) {
  TempDir dir;
  TraceWriter w(3);
  const int pair = w.add_comm({2, 0}, "pair");
  scenario::open_all(w);
  w.region(0, "work", 0.5, 5.0);
  w.send(0, 5.0, 5.1, /*dest=pair-local*/ 0, 0, 64, pair);
  w.region(1, "work", 0.5, 3.0);
  w.send(1, 3.0, 3.1, 2, 0, 64);
  w.enter(2, 0.9, "phase1");
  w.recv(2, 1.0, 5.2, /*src=pair-local*/ 1, 0, 64, pair);
  w.leave(2, 5.25, "phase1");
  w.enter(2, 5.25, "phase2");
  w.recv(2, 5.3, 5.4, 1, 0, 64);
  w.leave(2, 5.45, "phase2");
  scenario::close_all(w, 6.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string first = kMain + "/phase1/MPI_Recv";
  EXPECT_NEAR(at(cube, "mpi_latesender", first, 2), 4.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_latesender_wo", first, 2), 4.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_lswo_same", first, 2), 4.0, kTol);
  EXPECT_EQ(at(cube, "mpi_lswo_different", first, 2), 0.0);
}

// Wrong order compares the send *events*, not the send calls' Enter. Rank 0: MPI_Send [5, 5.1]
// with its event at 5. Rank 1: MPI_Ssend entered at 3 with its MpiSend event only at 6 (a
// synthetic late event), left at 6.1. Rank 2: phase1 MPI_Recv from 0 [1, 5.2] -> LS 4, entry
// t(s) = 5; phase2 MPI_Recv from 1 [6.2, 6.3] -> idle = min(3, 6.3) - 6.2 < 0.
// t(s_entry) = 5 > t(s) = 6 is false -> no wrong order (comparing Enters, 5 > 3, would give 4).
// LR of the Ssend: ec = 3, eq = 6.2 >= lc = 6.1 -> 0.
TEST(WrongOrder, LaterSendEventDespiteEarlierEnter_NotWrongOrder) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  w.region(0, "work", 0.5, 5.0);
  w.send(0, 5.0, 5.1, 2, 0, 64);
  w.region(1, "work", 0.5, 3.0);
  w.enter(1, 3.0, "MPI_Ssend");
  w.mpi_send(1, 6.0, 2, 0, 64);
  w.leave(1, 6.1, "MPI_Ssend");
  w.enter(2, 0.9, "phase1");
  w.recv(2, 1.0, 5.2, 0, 0, 64);
  w.leave(2, 5.25, "phase1");
  w.enter(2, 6.15, "phase2");
  w.recv(2, 6.2, 6.3, 1, 0, 64);
  w.leave(2, 6.35, "phase2");
  scenario::close_all(w, 7.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string first = kMain + "/phase1/MPI_Recv";
  EXPECT_NEAR(at(cube, "mpi_latesender", first, 2), 4.0, kTol);
  EXPECT_EQ(at(cube, "mpi_latesender_wo", first, 2), 0.0);
  EXPECT_EQ(at(cube, "mpi_clswo_count", first, 2), 0.0);
  EXPECT_EQ(scenario::total(cube, "mpi_latesender_wo"), 0.0);
  EXPECT_EQ(scenario::total(cube, "mpi_latereceiver"), 0.0);
}

// The wrong-order buffer holds the last 100 Late Sender instances. Rank 0 sends 101 messages to
// rank 1, message i in MPI_Send [2 + i, 2.1 + i]; rank 1 receives each in MPI_Recv
// [1.5 + i, 2.2 + i]: LS = 0.5 each, 101 * 0.5 = 50.5 in total; in order, so no wrong order yet.
// Then rank 1 receives rank 2's message sent at [1, 1.1] in MPI_Recv [104, 104.1] (no LS).
// Every buffered entry was sent later than 1, but the first of the 101 was dropped:
// mpi_latesender_wo = mpi_lswo_different = 100 * 0.5 = 50, mpi_clswo_count = 100.
TEST(WrongOrder, MoreThanHundredLateSenders_OnlyLastHundredReported) {
  constexpr int kMessages = 101;
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  for (int i = 0; i < kMessages; ++i) {
    w.send(0, 2.0 + i, 2.1 + i, 1, 0, 8);
    w.recv(1, 1.5 + i, 2.2 + i, 0, 0, 8);
  }
  w.send(2, 1.0, 1.1, 1, 0, 8);
  w.region(1, "work", 2.2 + (kMessages - 1), 104.0);
  w.enter(1, 104.0, "late");
  w.recv(1, 104.0, 104.1, 2, 0, 8);
  w.leave(1, 104.1, "late");
  scenario::close_all(w, 105.0);
  const CubeFile cube = scenario::analyze(w, dir);
  EXPECT_NEAR(at(cube, "mpi_latesender", kRecv, 1), 50.5, kTol);
  EXPECT_EQ(at(cube, "mpi_cls_count", kRecv, 1), 101.0);
  EXPECT_NEAR(at(cube, "mpi_latesender_wo", kRecv, 1), 50.0, kTol);
  EXPECT_NEAR(at(cube, "mpi_lswo_different", kRecv, 1), 50.0, kTol);
  EXPECT_EQ(at(cube, "mpi_lswo_same", kRecv, 1), 0.0);
  EXPECT_EQ(at(cube, "mpi_clswo_count", kRecv, 1), 100.0);
  EXPECT_EQ(at(cube, "mpi_latesender", kMain + "/late/MPI_Recv", 1), 0.0);
  EXPECT_EQ(at(cube, "mpi_latesender_wo", kMain + "/late/MPI_Recv", 1), 0.0);
}

// ---- Late Receiver (§5.3) ---------------------------------------------------------------------

// The §5.3 example plus a blocking MPI_Send of 0 bytes.
// Message 1: rank 0 MPI_Ssend [2, 6]; rank 1 MPI_Recv [5, 6.1]: ec = 2 < eq = 5 < lc = 6 ->
//   LR = eq - ec = 3 at MPI_Ssend, mpi_clr_count 1. LS on rank 1: min(2, 6.1) - 5 < 0 -> 0.
// Message 2: rank 0 MPI_Send (0 B) [7, 9]; rank 1 MPI_Recv [8, 9.1] -> LR = 8 - 7 = 1 at
//   MPI_Send, mpi_slr_count 1 (0 bytes).
TEST(LateReceiver, BlockingSendEnteredBeforeRecvPosted_ReportsGap) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  w.region(0, "work", 0.5, 2.0);
  w.send(0, 2.0, 6.0, 1, 0, 64, 0, "MPI_Ssend");
  w.region(0, "work", 6.0, 7.0);
  w.send(0, 7.0, 9.0, 1, 1, 0);
  w.region(1, "work", 0.5, 5.0);
  w.recv(1, 5.0, 6.1, 0, 0, 64);
  w.region(1, "work", 6.1, 8.0);
  w.recv(1, 8.0, 9.1, 0, 1, 0);
  scenario::close_all(w, 10.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string ssend = kMain + "/MPI_Ssend";
  EXPECT_NEAR(at(cube, "mpi_latereceiver", ssend, 0), 3.0, kTol);
  EXPECT_EQ(at(cube, "mpi_clr_count", ssend, 0), 1.0);
  EXPECT_EQ(at(cube, "mpi_slr_count", ssend, 0), 0.0);
  EXPECT_NEAR(at(cube, "mpi_latereceiver", kSend, 0), 1.0, kTol);
  EXPECT_EQ(at(cube, "mpi_slr_count", kSend, 0), 1.0);
  EXPECT_EQ(at(cube, "mpi_clr_count", kSend, 0), 0.0);
  EXPECT_EQ(at(cube, "mpi_latesender", kRecv, 1), 0.0);
  EXPECT_EQ(at(cube, "mpi_latereceiver", kRecv, 1), 0.0);
}

// Message 1: MPI_Send [1, 2], MPI_Recv entered at 3: lc = 2 <= eq = 3 -> 0.
// Message 2: MPI_Send [4, 5], MPI_Recv entered exactly at 5: lc = 5 <= eq = 5 -> 0 (the post
// must fall strictly inside the send call).
TEST(LateReceiver, RecvPostedAfterSendLeft_NoWait) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  w.send(0, 1.0, 2.0, 1, 0, 64);
  w.region(0, "work", 2.0, 4.0);
  w.send(0, 4.0, 5.0, 1, 1, 64);
  w.region(1, "work", 0.5, 3.0);
  w.recv(1, 3.0, 3.1, 0, 0, 64);
  w.region(1, "work", 3.1, 5.0);
  w.recv(1, 5.0, 5.1, 0, 1, 64);
  scenario::close_all(w, 6.0);
  const CubeFile cube = scenario::analyze(w, dir);
  EXPECT_EQ(at(cube, "mpi_latereceiver", kSend, 0), 0.0);
  EXPECT_EQ(at(cube, "mpi_clr_count", kSend, 0), 0.0);
  EXPECT_EQ(at(cube, "comms_send", kSend, 0), 2.0);
  EXPECT_EQ(scenario::total(cube, "mpi_latereceiver"), 0.0);
  EXPECT_EQ(scenario::total(cube, "mpi_latesender"), 0.0);
}

// MPI_Bsend [2, 6] with the receive posted at 5, and MPI_Rsend [7, 8] with the receive posted
// at 7.5: both would be LR (3 and 0.5) for MPI_Send/MPI_Ssend, but buffered and ready sends
// never give Late Receiver (§5.3) -> 0. LS: min(2, 6.1) - 5 < 0 and min(7, 8.1) - 7.5 < 0.
TEST(LateReceiver, BufferedAndReadySend_NoWait) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  w.region(0, "work", 0.5, 2.0);
  w.send(0, 2.0, 6.0, 1, 0, 64, 0, "MPI_Bsend");
  w.region(0, "work", 6.0, 7.0);
  w.send(0, 7.0, 8.0, 1, 1, 64, 0, "MPI_Rsend");
  w.region(1, "work", 0.5, 5.0);
  w.recv(1, 5.0, 6.1, 0, 0, 64);
  w.region(1, "work", 6.1, 7.5);
  w.recv(1, 7.5, 8.1, 0, 1, 64);
  scenario::close_all(w, 9.0);
  const CubeFile cube = scenario::analyze(w, dir);
  for (const std::string call : {"MPI_Bsend", "MPI_Rsend"}) {
    const std::string path = kMain + "/" + call;
    EXPECT_EQ(at(cube, "mpi_latereceiver", path, 0), 0.0) << call;
    EXPECT_EQ(at(cube, "mpi_clr_count", path, 0), 0.0) << call;
    EXPECT_EQ(at(cube, "comms_send", path, 0), 1.0) << call;
  }
  EXPECT_EQ(scenario::total(cube, "mpi_latereceiver"), 0.0);
  EXPECT_EQ(scenario::total(cube, "mpi_latesender"), 0.0);
}

// Rank 0: MPI_Isend [1, 1.1], MPI_Wait [2, 6] holding the MpiIsendComplete.
// Rank 1: MPI_Recv [4, 6.1].
// c = the completion in MPI_Wait: ec = 2 < eq = 4 < lc = 6 -> LR = 4 - 2 = 2 at MPI_Wait
// (not at MPI_Isend), mpi_clr_count 1 there. The send itself counts at MPI_Isend.
// LS on rank 1: min(es = 1, 6.1) - 4 < 0 -> 0.
TEST(LateReceiver, IsendThenWait_ReportsGapAtWait) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  w.enter(0, 1.0, "MPI_Isend");
  w.mpi_isend(0, 1.0, 1, 0, 64, /*request=*/7);
  w.leave(0, 1.1, "MPI_Isend");
  w.region(0, "work", 1.1, 2.0);
  w.enter(0, 2.0, "MPI_Wait");
  w.mpi_isend_complete(0, 6.0, 7);
  w.leave(0, 6.0, "MPI_Wait");
  w.region(1, "work", 0.5, 4.0);
  w.recv(1, 4.0, 6.1, 0, 0, 64);
  scenario::close_all(w, 7.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string wait = kMain + "/MPI_Wait", isend = kMain + "/MPI_Isend";
  EXPECT_NEAR(at(cube, "mpi_latereceiver", wait, 0), 2.0, kTol);
  EXPECT_EQ(at(cube, "mpi_clr_count", wait, 0), 1.0);
  EXPECT_EQ(at(cube, "mpi_latereceiver", isend, 0), 0.0);
  EXPECT_EQ(at(cube, "comms_send", isend, 0), 1.0);
  EXPECT_EQ(at(cube, "bytes_sent", isend, 0), 64.0);
  EXPECT_EQ(at(cube, "mpi_latesender", kRecv, 1), 0.0);
}

// The receive request is the MpiIrecvRequest: rank 0 MPI_Ssend [2, 6]; rank 1 MPI_Irecv
// [4, 4.1], MPI_Wait [5, 6.1]. eq = Enter of MPI_Irecv = 4 (not the Wait's 5) -> LR = 4 - 2 = 2.
// LS at the Wait: min(2, 6.1) - 5 < 0 -> 0.
TEST(LateReceiver, IrecvPostedDuringSsend_UsesIrecvEnter) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  w.region(0, "work", 0.5, 2.0);
  w.send(0, 2.0, 6.0, 1, 0, 64, 0, "MPI_Ssend");
  w.region(1, "work", 0.5, 4.0);
  w.enter(1, 4.0, "MPI_Irecv");
  w.mpi_irecv_request(1, 4.0, 3);
  w.leave(1, 4.1, "MPI_Irecv");
  w.region(1, "work", 4.1, 5.0);
  w.enter(1, 5.0, "MPI_Wait");
  w.mpi_irecv(1, 6.1, 0, 0, 64, 3);
  w.leave(1, 6.1, "MPI_Wait");
  scenario::close_all(w, 7.0);
  const CubeFile cube = scenario::analyze(w, dir);
  EXPECT_NEAR(at(cube, "mpi_latereceiver", kMain + "/MPI_Ssend", 0), 2.0, kTol);
  EXPECT_EQ(at(cube, "mpi_clr_count", kMain + "/MPI_Ssend", 0), 1.0);
  EXPECT_EQ(at(cube, "mpi_latesender", kMain + "/MPI_Wait", 1), 0.0);
}

/// Rank 0: MPI_Isend to rank 1 [0.5, 0.6] (request 1) and to rank 2 [0.7, 0.8] (request 2).
void isends_to_ranks_1_and_2(TraceWriter& w) {
  for (int dest = 1; dest <= 2; ++dest) {
    const double t = 0.3 + 0.2 * dest;
    w.enter(0, t, "MPI_Isend");
    w.mpi_isend(0, t, dest, 0, 64, dest);
    w.leave(0, t + 0.1, "MPI_Isend");
  }
}

// Rank 0: MPI_Isend to 1 and to 2 (at 0.5 and 0.7), MPI_Waitall [1, 6] completing both.
// Rank 1 posts MPI_Recv at 4, rank 2 at 3: idles 4 - 1 = 3 and 3 - 1 = 2. The Waitall had no
// receive, so no LS candidate: only the maximum, 3 (the first, not the last), counts, once at
// MPI_Waitall; mpi_clr_count = 1.
TEST(LateReceiver, WaitallTwoIsends_MaximumCountsOnce) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  isends_to_ranks_1_and_2(w);
  w.enter(0, 1.0, "MPI_Waitall");
  w.mpi_isend_complete(0, 6.0, 1);
  w.mpi_isend_complete(0, 6.0, 2);
  w.leave(0, 6.0, "MPI_Waitall");
  w.region(1, "work", 0.5, 4.0);
  w.recv(1, 4.0, 6.1, 0, 0, 64);
  w.region(2, "work", 0.5, 3.0);
  w.recv(2, 3.0, 6.1, 0, 0, 64);
  scenario::close_all(w, 7.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string waitall = kMain + "/MPI_Waitall";
  EXPECT_NEAR(at(cube, "mpi_latereceiver", waitall, 0), 3.0, kTol);
  EXPECT_EQ(at(cube, "mpi_clr_count", waitall, 0), 1.0);
  EXPECT_NEAR(scenario::total(cube, "mpi_latereceiver"), 3.0, kTol);
}

// Completions in the other order than the sends: rank 0 sends a to 1 [0.5, 0.6] and b to 2
// [0.7, 0.8], completes b in an MPI_Waitall [1, 5] and a in a second one [5.1, 8]. Rank 2 posts
// its MPI_Recv at 3, rank 1 at 6: the first Waitall idles 3 - 1 = 2, the second 6 - 5.1 = 0.9,
// each its call's maximum, counted once per call (the pass meets a's call first, then b's
// earlier one).
TEST(LateReceiver, TwoWaitallsCompletingTheSendsInReverse_EachCounted) {
  TempDir dir;
  TraceWriter w(3);
  scenario::open_all(w);
  isends_to_ranks_1_and_2(w);
  w.enter(0, 1.0, "MPI_Waitall");
  w.mpi_isend_complete(0, 5.0, 2);
  w.leave(0, 5.0, "MPI_Waitall");
  w.enter(0, 5.1, "MPI_Waitall");
  w.mpi_isend_complete(0, 8.0, 1);
  w.leave(0, 8.0, "MPI_Waitall");
  w.region(1, "work", 0.5, 6.0);
  w.recv(1, 6.0, 8.1, 0, 0, 64);
  w.region(2, "work", 0.5, 3.0);
  w.recv(2, 3.0, 5.1, 0, 0, 64);
  scenario::close_all(w, 9.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string waitall = kMain + "/MPI_Waitall";
  EXPECT_NEAR(at(cube, "mpi_latereceiver", waitall, 0), 2.9, kTol);
  EXPECT_EQ(at(cube, "mpi_clr_count", waitall, 0), 2.0);
  EXPECT_NEAR(scenario::total(cube, "mpi_latereceiver"), 2.9, kTol);
}

/// Rank 0: MPI_Isend to rank 1 [t, t + 0.1], MPI_Irecv from rank 1 [t + 0.2, t + 0.3] (64 bytes,
/// tag 0, requests 1 and 2), then MPI_Waitall [wait, end] completing both.
void isend_irecv_waitall(TraceWriter& w, double t, double wait, double end) {
  w.enter(0, t, "MPI_Isend");
  w.mpi_isend(0, t, 1, 0, 64, 1);
  w.leave(0, t + 0.1, "MPI_Isend");
  w.enter(0, t + 0.2, "MPI_Irecv");
  w.mpi_irecv_request(0, t + 0.2, 2);
  w.leave(0, t + 0.3, "MPI_Irecv");
  w.enter(0, wait, "MPI_Waitall");
  w.mpi_isend_complete(0, end, 1);
  w.mpi_irecv(0, end, 1, 0, 64, 2);
  w.leave(0, end, "MPI_Waitall");
}

// Rank 0: MPI_Isend to 1 [0.5, 0.6], MPI_Irecv from 1 [0.7, 0.8], MPI_Waitall [1, 6] completing
// both. Rank 1: MPI_Recv [3, 4], then MPI_Send to 0 [5, 5.1].
// LS in the Waitall: min(5, 6) - 1 = 4 > 0 -> the Waitall has an LS candidate, LS = 4.
// LR of the Isend: ec = 1 < eq = 3 < lc = 6 would give 2, but a Waitall with an LS candidate is
// ignored for Late Receiver (§5.3) -> 0.
TEST(LateReceiver, WaitallWithLateSenderCandidate_NoWait) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  isend_irecv_waitall(w, 0.5, 1.0, 6.0);
  w.region(1, "work", 0.5, 3.0);
  w.recv(1, 3.0, 4.0, 0, 0, 64);
  w.region(1, "work", 4.0, 5.0);
  w.send(1, 5.0, 5.1, 0, 0, 64);
  scenario::close_all(w, 7.0);
  const CubeFile cube = scenario::analyze(w, dir);
  const std::string waitall = kMain + "/MPI_Waitall";
  EXPECT_NEAR(at(cube, "mpi_latesender", waitall, 0), 4.0, kTol);
  EXPECT_EQ(at(cube, "mpi_cls_count", waitall, 0), 1.0);
  EXPECT_EQ(at(cube, "mpi_latereceiver", waitall, 0), 0.0);
  EXPECT_EQ(at(cube, "mpi_clr_count", waitall, 0), 0.0);
  EXPECT_EQ(scenario::total(cube, "mpi_latereceiver"), 0.0);
}

// The same rule when the replay settles the two sides of rank 0 in different rounds. Rank 1
// sends a [0.5, 0.6] and b [0.7, 0.8], posts MPI_Recv [3, 4] for rank 0's Isend, then sends c
// [c_enter, c_enter + 0.1]. Rank 0: MPI_Recv a [0.5, 1], MPI_Recv b [1, 1.5], MPI_Isend to 1
// [1.6, 1.7], MPI_Irecv c [1.8, 1.9], MPI_Waitall [2, 6] completing both. With --window 1 the
// Isend's reply comes back in the first round, while c arrives only in the third: the Waitall's
// Late Receiver must wait for its receives.
// c_enter = 5: LS = min(5, 6) - 2 = 3 in the Waitall, so no LR (else 3 - 2 = 1).
// c_enter = 0.9 (before the Recv at 3): LS = 0, LR = 1.
TEST(LateReceiver, WaitallSidesSettledInDifferentRounds_SameAsOneRound) {
  for (const double c_enter : {5.0, 0.9}) {
    TempDir dir;
    TraceWriter w(2);
    scenario::open_all(w);
    w.recv(0, 0.5, 1.0, 1, 0, 64);
    w.recv(0, 1.0, 1.5, 1, 0, 64);
    isend_irecv_waitall(w, 1.6, 2.0, 6.0);
    w.send(1, 0.5, 0.6, 0, 0, 64);
    w.send(1, 0.7, 0.8, 0, 0, 64);
    if (c_enter < 3.0) w.send(1, c_enter, c_enter + 0.1, 0, 0, 64);
    w.region(1, "work", c_enter < 3.0 ? c_enter + 0.1 : 0.8, 3.0);
    w.recv(1, 3.0, 4.0, 0, 0, 64);
    if (c_enter >= 3.0) {
      w.region(1, "work", 4.0, c_enter);
      w.send(1, c_enter, c_enter + 0.1, 0, 0, 64);
    }
    scenario::close_all(w, 7.0);
    const std::string waitall = kMain + "/MPI_Waitall";
    const double ls = c_enter >= 3.0 ? 3.0 : 0.0;
    const double lr = c_enter >= 3.0 ? 0.0 : 1.0;
    for (const char* window : {"1", "4096"}) {
      SCOPED_TRACE(std::string("c_enter ") + std::to_string(c_enter) + ", --window " + window);
      const CubeFile cube = scenario::analyze(w, dir, {"--window", window}, window);
      EXPECT_NEAR(at(cube, "mpi_latesender", waitall, 0), ls, kTol);
      EXPECT_NEAR(at(cube, "mpi_latereceiver", waitall, 0), lr, kTol);
      EXPECT_EQ(at(cube, "mpi_clr_count", waitall, 0), lr > 0.0 ? 1.0 : 0.0);
      EXPECT_NEAR(scenario::total(cube, "mpi_latereceiver"), lr, kTol);
    }
  }
}

// Rank 0: MPI_Isend [1, 1.1], completed in MPI_Test [2, 6]; rank 1 posts MPI_Recv at 4.
// For MPI_Wait this would be LR = 4 - 2 = 2; sends completed in MPI_Test* give none (§5.3).
TEST(LateReceiver, IsendCompletedInTest_NoWait) {
  TempDir dir;
  TraceWriter w(2);
  scenario::open_all(w);
  w.enter(0, 1.0, "MPI_Isend");
  w.mpi_isend(0, 1.0, 1, 0, 64, 5);
  w.leave(0, 1.1, "MPI_Isend");
  w.region(0, "work", 1.1, 2.0);
  w.enter(0, 2.0, "MPI_Test");
  w.mpi_isend_complete(0, 6.0, 5);
  w.leave(0, 6.0, "MPI_Test");
  w.region(1, "work", 0.5, 4.0);
  w.recv(1, 4.0, 6.1, 0, 0, 64);
  scenario::close_all(w, 7.0);
  const CubeFile cube = scenario::analyze(w, dir);
  EXPECT_EQ(at(cube, "mpi_latereceiver", kMain + "/MPI_Test", 0), 0.0);
  EXPECT_EQ(at(cube, "mpi_clr_count", kMain + "/MPI_Test", 0), 0.0);
  EXPECT_EQ(scenario::total(cube, "mpi_latereceiver"), 0.0);
}

}  // namespace
}  // namespace cpreplay::testing
