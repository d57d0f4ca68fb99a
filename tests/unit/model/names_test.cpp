// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the names people read: demangled regions, call paths shortened for display.
// The names are those of ../shared/real (HPCCG and LULESH, recorded without a demangler).
#include <gtest/gtest.h>

#include <set>

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

TEST(ShortenName, CxxName_TemplatesThenParametersThenScopesGiveWay) {
  const std::string rb =
      "std::_Rb_tree<int, std::pair<int const, int>, std::_Select1st<std::pair<int const, int> "
      ">, std::less<int>, std::allocator<std::pair<int const, int> > >::_Rb_tree_impl<std::"
      "less<int>, true>::_Rb_tree_impl()";
  EXPECT_EQ(shorten_name(rb, 60), "std::_Rb_tree<...>::_Rb_tree_impl<...>::_Rb_tree_impl()");
  EXPECT_EQ(shorten_name(rb, 40), "...::_Rb_tree_impl<...>::_Rb_tree_impl()");
  EXPECT_EQ(shorten_name(rb, 25), "...::_Rb_tree_impl()");  // longer than 25: the own name stays
  const std::string ex = "exchange_externals(HPC_Sparse_Matrix_STRUCT*, double const*)";
  EXPECT_EQ(shorten_name(ex, 80), ex);
  EXPECT_EQ(shorten_name(ex, 40), "exchange_externals(...)");
  EXPECT_EQ(shorten_name(ex, 5), "exchange_externals(...)");
  EXPECT_EQ(shorten_name("MPI::Intracomm::Intracomm(ompi_communicator_t*)", 40),
            "MPI::Intracomm::Intracomm(...)");
  EXPECT_EQ(shorten_name("MPI::Intracomm::Intracomm(ompi_communicator_t*)", 25),
            "...::Intracomm(...)");
}

TEST(ShortenName, OpenMpConstruct_KeepsFileAndLine) {
  EXPECT_EQ(shorten_name("!$omp parallel @lulesh.cc:1159", 40), "!$omp parallel @lulesh.cc:1159");
  EXPECT_EQ(shorten_name("!$omp parallel @lulesh.cc:1159", 25), "parallel @lulesh.cc:1159");
  EXPECT_EQ(shorten_name("!$omp implicit barrier @lulesh.cc:1164", 25),
            "implic... @lulesh.cc:1164");
  EXPECT_EQ(shorten_name("!$omp implicit barrier @lulesh.cc:1164", 10), "i... @lulesh.cc:1164");
}

TEST(SplitCallpath, SlashesInsideCxxNamesStay) {
  EXPECT_EQ(split_callpath("a/operator/(int, int)/b<x/y>"),
            (std::vector<std::string>{"a", "operator/(int, int)", "b<x/y>"}));
  EXPECT_EQ(callee_of("prog/main/MPI_Recv"), "MPI_Recv");
}

// The seven `.../!$omp parallel @lule...` rows of issue 33: LULESH's parallel regions under
// the same functions read apart by their lines, the program root is left out, the middle gives
// way first.
TEST(ShortenCallpaths, LuleshParallelRegions_ReadApartByLine) {
  const std::string pre =
      "lulesh2.0/main/LagrangeLeapFrog(Domain&)/LagrangeElements(Domain&, int)/";
  const std::vector<std::string> paths = {
      pre + "CalcQForElems(Domain&)/!$omp parallel @lulesh.cc:1159",
      pre + "CalcQForElems(Domain&)/!$omp parallel @lulesh.cc:1159/!$omp for @lulesh.cc:1162",
      pre + "CalcQForElems(Domain&)/!$omp parallel @lulesh.cc:1159/!$omp for @lulesh.cc:1168",
      pre + "ApplyMaterialPropertiesForElems(Domain&)/!$omp parallel @lulesh.cc:2022",
      pre + "ApplyMaterialPropertiesForElems(Domain&)/!$omp parallel @lulesh.cc:2029",
      "lulesh2.0/main/MPI_Allreduce"};
  EXPECT_EQ(shorten_callpaths(paths, 29),
            (std::vector<std::string>{".../parallel @lulesh.cc:1159",
                                      ".../!$omp for @lulesh.cc:1162",
                                      ".../!$omp for @lulesh.cc:1168",
                                      ".../parallel @lulesh.cc:2022",
                                      ".../parallel @lulesh.cc:2029", "main/MPI_Allreduce"}));
  EXPECT_EQ(shorten_callpaths(paths, 40)[0], "main/.../!$omp parallel @lulesh.cc:1159");
  EXPECT_EQ(shorten_callpath(paths[3], 200),
            "main/LagrangeLeapFrog(Domain&)/LagrangeElements(Domain&, int)/"
            "ApplyMaterialPropertiesForElems(Domain&)/!$omp parallel @lulesh.cc:2022");
}

// The same construct under two callers: each shows its caller.
TEST(ShortenCallpaths, SameCalleeUnderTwoCallers_ShowsTheCallers) {
  const std::vector<std::string> paths = {
      "lulesh2.0/main/CalcForceForNodes(Domain&)/!$omp parallel @lulesh.cc:282",
      "lulesh2.0/main/CalcQForElems(Domain&)/!$omp parallel @lulesh.cc:282"};
  EXPECT_EQ(shorten_callpath(paths[0], 29), shorten_callpath(paths[1], 29));
  const std::vector<std::string> shown = shorten_callpaths(paths, 29);
  EXPECT_EQ(shown[0], "main/CalcForceForNodes(Domain&)/parallel @lulesh.cc:282");
  EXPECT_EQ(shown[1], "main/CalcQForElems(Domain&)/parallel @lulesh.cc:282");
}

// HPCCG unfiltered (hpccg-4u): std::map internals under two callers; each row shows the
// nearest ancestor that differs, the components between give way to "...".
TEST(ShortenCallpaths, StdMapInternals_ShowTheAncestorThatDiffers) {
  const std::string map =
      "std::map<int, int, std::less<int>, std::allocator<std::pair<int const, int> > >::";
  const std::string tree =
      "std::_Rb_tree<int, std::pair<int const, int>, std::_Select1st<std::pair<int const, int> "
      ">, std::less<int>, std::allocator<std::pair<int const, int> > >::";
  const std::string tail = "/" + tree +
                           "_M_lower_bound(std::_Rb_tree_node<std::pair<int const, int> >*, "
                           "std::_Rb_tree_node_base*, int const&)/" + tree +
                           "_S_key(std::_Rb_tree_node<std::pair<int const, int> > const*)/"
                           "std::_Rb_tree_node<std::pair<int const, int> >::_M_valptr() const";
  const std::vector<std::string> paths = {
      "main/make_local_matrix(HPC_Sparse_Matrix_STRUCT*)/" + map + "find(int const&)" + tail,
      "main/make_local_matrix(HPC_Sparse_Matrix_STRUCT*)/" + map + "lower_bound(int const&)" +
          tail};
  EXPECT_EQ(shorten_callpath(paths[0], 29), ".../...::_M_valptr() const");
  const std::vector<std::string> shown = shorten_callpaths(paths, 29);
  EXPECT_EQ(shown[0], ".../std::map<...>::find(...)/.../...::_M_valptr() const");
  EXPECT_EQ(shown[1], ".../...::lower_bound(...)/.../...::_M_valptr() const");  // 31 > 29
}

// One set at several widths (the summary's tables): split once, each width as shorten_callpaths
// gives it alone; groups of paths that read the same, found by their texts' hashes, keep equal
// paths equal and tell different ones apart.
TEST(CallpathSet, SeveralWidths_AsShortenCallpathsOneAtATime) {
  const std::vector<std::string> paths = {
      "lulesh2.0/main/CalcForceForNodes(Domain&)/!$omp parallel @lulesh.cc:282",
      "lulesh2.0/main/CalcQForElems(Domain&)/!$omp parallel @lulesh.cc:282",
      "lulesh2.0/main/CalcForceForNodes(Domain&)/!$omp parallel @lulesh.cc:282",
      "lulesh2.0/main/MPI_Allreduce"};
  const CallpathSet set(paths);
  const std::vector<std::string> at29 = set.shorten(29);
  EXPECT_EQ(at29, (std::vector<std::string>{
                      "main/CalcForceForNodes(Domain&)/parallel @lulesh.cc:282",
                      "main/CalcQForElems(Domain&)/parallel @lulesh.cc:282",
                      "main/CalcForceForNodes(Domain&)/parallel @lulesh.cc:282",
                      "main/MPI_Allreduce"}));
  for (const std::size_t width : {12, 29, 30, 40, 200})
    EXPECT_EQ(set.shorten(width), shorten_callpaths(paths, width)) << "width " << width;
  EXPECT_TRUE(CallpathSet({}).shorten(30).empty());
}

// Overloads differ in their parameters only: shown whole where "(...)" would hide that.
TEST(ShortenCallpaths, OverloadsCut_ShownWhole) {
  const std::string pre = "test_HPCCG/main/HPCCG(HPC_Sparse_Matrix_STRUCT*, double const*)/";
  const std::vector<std::string> paths = {pre + "waxpby(int, double, double const*, double*)",
                                          pre + "waxpby(int, float, float const*, float*)",
                                          pre + "waxpby(int, double, double const*, double*)"};
  const std::vector<std::string> shown = shorten_callpaths(paths, 24);
  EXPECT_EQ(shown[0], shown[2]);  // the same call path reads the same
  EXPECT_NE(shown[0], shown[1]);
  EXPECT_EQ(shown[1],
            "main/HPCCG(HPC_Sparse_Matrix_STRUCT*, double const*)/waxpby(int, float, float "
            "const*, float*)");
  EXPECT_EQ(shorten_callpath(paths[0], 24), "main/.../waxpby(...)");
}

TEST(ShortenNames, CollidingCuts_ShownWhole) {
  const std::vector<std::string> shown =
      shorten_names({"foo(int, int, int, int)", "foo(double, double, double)", "bar(int)"}, 10);
  EXPECT_EQ(shown, (std::vector<std::string>{"foo(int, int, int, int)",
                                             "foo(double, double, double)", "bar(int)"}));
  EXPECT_EQ(shorten_names({"exchange_externals(HPC_Sparse_Matrix_STRUCT*, double const*)"}, 30),
            (std::vector<std::string>{"exchange_externals(...)"}));
}

}  // namespace
}  // namespace cpreplay
