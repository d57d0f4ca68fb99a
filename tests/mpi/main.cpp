// SPDX-License-Identifier: BSD-3-Clause
// The main of the MPI test executables: gtest inside MPI_Init/MPI_Finalize, failing everywhere if any process failed.
#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  const int failed = RUN_ALL_TESTS();
  // One process's failed assertion must fail the whole mpirun, not only that process's exit code.
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
