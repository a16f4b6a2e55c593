#include "agent/dynlib.h"

#include <gtest/gtest.h>

namespace cc::agent {
namespace {

TEST(Dynlib, StopsAtTheFirstLibraryThatLoadsAndRecordsEveryAttempt) {
  DynlibSearch search;
  Dynlib lib = Dynlib::OpenFirst(
      {"/nonexistent/libm.so.6", "libclustercheck-nope.so.1", "libm.so.6", "libc.so.6"}, &search);
  ASSERT_TRUE(lib.loaded());
  ASSERT_EQ(search.attempts.size(), 3u);
  EXPECT_EQ(search.attempts[0].error, "no such file");
  EXPECT_NE(search.attempts[1].error.find("libclustercheck-nope.so.1"), std::string::npos);
  EXPECT_TRUE(search.attempts[2].error.empty());
  // The loader's real file, not the name we asked for.
  EXPECT_EQ(lib.real_path().front(), '/');
  EXPECT_NE(lib.real_path().find("libm"), std::string::npos);
  auto searched = search.SearchedJson();
  EXPECT_EQ(searched.size(), 3u);
  EXPECT_NE(searched[2].get<std::string>().find("loaded"), std::string::npos);
}

TEST(Dynlib, MissingSymbolsSayWhichAndDoNotCrash) {
  DynlibSearch search;
  Dynlib lib = Dynlib::OpenFirst({"libm.so.6"}, &search);
  ASSERT_TRUE(lib.loaded());
  double (*cos_fn)(double) = nullptr;
  std::string err;
  EXPECT_TRUE(lib.Bind("cos", &cos_fn, &err));
  EXPECT_DOUBLE_EQ(cos_fn(0.0), 1.0);
  int (*nope)() = nullptr;
  EXPECT_FALSE(lib.Bind("ncclGetVersion", &nope, &err));
  EXPECT_NE(err.find("ncclGetVersion"), std::string::npos);
}

TEST(Dynlib, NothingLoadedWhenNoCandidateExists) {
  DynlibSearch search;
  Dynlib lib = Dynlib::OpenFirst({"/nonexistent/a.so"}, &search);
  EXPECT_FALSE(lib.loaded());
  std::string err;
  EXPECT_EQ(lib.Symbol("x", &err), nullptr);
  EXPECT_FALSE(err.empty());
  Status s = search.NotFound("libx.so.1");
  EXPECT_TRUE(s.Is(ErrorKind::kNotFound));
  EXPECT_EQ(s.message().rfind("libx.so.1 not found; searched: /nonexistent/a.so (", 0), 0u)
      << s.message();
}

TEST(Dynlib, CandidatesJoinFoldersKeepFilesAndEndWithTheBareName) {
  auto c = LibraryCandidates({"/a/", "/b/libx.so.2.1", "", "/a"}, "libx.so.2");
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0], "/a/libx.so.2");
  EXPECT_EQ(c[1], "/b/libx.so.2.1");
  EXPECT_EQ(c[2], "libx.so.2");
}

TEST(Dynlib, SearchPathSplitDropsEmptyEntries) {
  EXPECT_EQ(SplitSearchPath("/a::/b:"), (std::vector<std::string>{"/a", "/b"}));
  EXPECT_TRUE(SplitSearchPath("").empty());
}

}  // namespace
}  // namespace cc::agent
