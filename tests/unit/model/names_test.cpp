// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the names people read: demangled regions.
// The names are those of ../shared/real (HPCCG and LULESH, recorded without a demangler).
#include <gtest/gtest.h>

#include "cpreplay/names.hpp"

namespace cpreplay {
namespace {

TEST(Demangle, HpccgSymbols_AsCxxfiltShowsThem) {
  EXPECT_EQ(demangle("_Z18exchange_externalsP24HPC_Sparse_Matrix_STRUCTPKd"),
            "exchange_externals(HPC_Sparse_Matrix_STRUCT*, double const*)");
  EXPECT_EQ(demangle("_Z5HPCCGP24HPC_Sparse_Matrix_STRUCTPKdPdidRiRdS3_"),
            "HPCCG(HPC_Sparse_Matrix_STRUCT*, double const*, double*, int, double, int&, "
            "double&, double*)");
  EXPECT_EQ(demangle("_ZN3MPI9IntracommC2EP19ompi_communicator_t"),
            "MPI::Intracomm::Intracomm(ompi_communicator_t*)");
  EXPECT_EQ(demangle("_ZNSt8_Rb_treeIiSt4pairIKiiESt10_Select1stIS2_ESt4lessIiESaIS2_EE13_Rb_"
                     "tree_implIS6_Lb1EEC2Ev"),
            "std::_Rb_tree<int, std::pair<int const, int>, std::_Select1st<std::pair<int const, "
            "int> >, std::less<int>, std::allocator<std::pair<int const, int> > "
            ">::_Rb_tree_impl<std::less<int>, true>::_Rb_tree_impl()");
}

TEST(Demangle, StaticInitializer_KeepsPrefixDemanglesSymbol) {
  EXPECT_EQ(demangle("_GLOBAL__sub_I__Z7mytimerv"), "_GLOBAL__sub_I_mytimer()");
  EXPECT_EQ(demangle("_GLOBAL__sub_I_main"), "_GLOBAL__sub_I_main");  // no symbol after it
}

TEST(Demangle, PlainAndInvalidNames_Unchanged) {
  for (const char* name : {"main", "MPI_Send", "!$omp parallel @lulesh.cc:282", "_Zz", "_Z",
                           "lulesh2.0", ""})
    EXPECT_EQ(demangle(name), name) << name;
}

TEST(LooksMangled, FindsSymbolsAnywhere_NotDemangledText) {
  EXPECT_TRUE(looks_mangled("_Z7mytimerv"));
  EXPECT_TRUE(looks_mangled("_GLOBAL__sub_I__Z7mytimerv"));
  EXPECT_TRUE(looks_mangled("main/_ZN3MPI9IntracommC2EP19ompi_communicator_t"));
  EXPECT_FALSE(looks_mangled("_GLOBAL__sub_I_mytimer()"));
  EXPECT_FALSE(looks_mangled("__static_initialization_and_destruction_0(int, int)"));
  EXPECT_FALSE(looks_mangled("main"));
}

}  // namespace
}  // namespace cpreplay
