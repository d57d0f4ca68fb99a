// SPDX-License-Identifier: BSD-3-Clause
// Open MPI's transport on one node: when every process of the run is on one node, Open MPI's
// default selection still probes the network-only `cm` transports (PSM, PSM2, OFI), which on
// machines without that hardware costs some 0.2 s of every run's MPI_Init. On one node the
// shared-memory path (`ob1` over `vader`/`sm`) is what Open MPI ends up using anyway, so
// cpreplay asks for it directly, unless the user or the site chose a transport
// (docs/replay-engine.md §9).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cpreplay::tools {

/// A launcher's or the user's number: whole and decimal, 0 to 2^31 - 1, nothing else (no sign,
/// no spaces, no suffix). False for anything else, nullptr included.
bool whole_number(const char* text, int& out);

/// What the decision reads: the environment (nullptr = unset) and the text of a file (empty when
/// it cannot be read). Injected so the rule is testable without a launcher.
struct StartupInputs {
  std::function<const char*(const char*)> env;
  std::function<std::string(const std::string&)> file;
  /// The directory of the MPI library cpreplay runs with (its sysconfdir is ../etc), or empty.
  std::string mpi_library_dir;
};

/// The Open MPI parameter files that may choose a transport: the ones named by
/// OMPI_MCA_mca_base_param_files, else the user's (~/.openmpi/mca-params.conf) and the
/// installation's (OPAL_PREFIX or the library's ../etc, and Debian's /etc/openmpi).
std::vector<std::string> open_mpi_param_files(const StartupInputs& in);

/// True if `text` (an Open MPI parameter file) selects a point-to-point layer or a matching
/// transport itself: a `pml` or `mtl` line whose value is not an exclusion (`^...`).
bool selects_transport(const std::string& text);

/// The value to give OMPI_MCA_pml, or empty to leave Open MPI's choice alone. Non-empty only
/// when the launcher is Open MPI's and says all processes are on this node
/// (OMPI_COMM_WORLD_LOCAL_SIZE == OMPI_COMM_WORLD_SIZE), no OMPI_MCA_pml/_mtl is set (mpirun's
/// --mca options arrive that way), no parameter file selects a transport, and
/// CPREPLAY_KEEP_MPI_TRANSPORT is unset, empty or 0.
std::string single_node_pml(const StartupInputs& in);

/// Applies single_node_pml to this process's environment; call first in main, before any
/// thread starts and before MPI_Init. Returns the value set, or empty.
std::string choose_single_node_transport();

/// The scheduler time slice cpreplay asks for, in nanoseconds (0: the kernel's default): its
/// processes run in short bursts between exchanges and are latency-bound, so beside busy
/// processes (other jobs, a build) each round of a replay would otherwise wait for their full
/// slices (docs/replay-engine.md §9). 0.1 ms unless CPREPLAY_TIME_SLICE_US (`override_us`; empty
/// is unset) says otherwise: a whole number of microseconds from 100 to 100000, or 0 for the
/// kernel's default. False if the override is anything else.
bool time_slice_ns(const char* override_us, std::uint64_t& ns);

/// Asks the kernel for time_slice_ns() on the calling thread (Linux 6.12 and later: a
/// SCHED_OTHER task's sched_runtime is its EEVDF slice; it changes when the task runs, not how
/// much). Earlier kernels and other systems ignore or refuse it; the run goes on either way.
/// Returns the slice the kernel reports back in nanoseconds, or 0 (not set). An invalid
/// override sets nothing (main reports it as a usage error).
std::uint64_t request_short_time_slices();

/// Asks for a slice of `ns` nanoseconds on the calling thread (0: the kernel's default again),
/// keeping its policy and nice value. Returns `ns` if the kernel reports it back, else 0.
std::uint64_t set_thread_time_slice(std::uint64_t ns);

/// Turns off Nagle's algorithm (TCP_NODELAY) on this process's TCP connections to a loopback
/// address: after MPI_Init, that is the launcher's PMIx connection (Open MPI 4 with PMIx 4 reach
/// their local server over 127.0.0.1 and leave Nagle on). MPI_Finalize's fence sends a few
/// small messages back to back there; each after the first waited for the server's delayed
/// acknowledgement, 40 ms, in every run (docs/replay-engine.md §9). Other sockets (Unix, UDP,
/// connections to other hosts) are left alone. Returns how many connections it set.
int no_delay_on_loopback_connections();

}  // namespace cpreplay::tools
