#include "orchestrator/stages/mpi/mpi_output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cc {
namespace {

using ::testing::HasSubstr;

TEST(StripMpiOutputTag, RemovesMpirunsTagAndReportsTheRank) {
  int rank = 0;
  EXPECT_EQ(StripMpiOutputTag("[1,12]<stdout>:{\"a\":1}", &rank), "{\"a\":1}");
  EXPECT_EQ(rank, 12);
  EXPECT_EQ(StripMpiOutputTag("[31744,3]<stderr>:oops", &rank), "oops");
  EXPECT_EQ(rank, 3);
}

TEST(StripMpiOutputTag, LeavesOtherBracketedLinesAlone) {
  int rank = 7;
  for (const char* l : {"[node1:01234] *** Process received signal ***", "[1,x]<stdout>:a",
                        "[1,2]<other>:a", "plain", ""}) {
    EXPECT_EQ(StripMpiOutputTag(l, &rank), l);
    EXPECT_EQ(rank, -1);
  }
}

TEST(ParseMpiProbeOutput, ReadsEveryKindOfProbeLine) {
  MpiProbeOutput o = ParseMpiProbeOutput({
      R"([1,0]<stdout>:{"type":"hello","rank":0,"size":2,"host":"node1","pid":7,"library":"Open MPI v4.1.4"})",
      R"([1,1]<stdout>:{"type":"hello","rank":1,"size":2,"host":"node2","pid":8,"library":"Open MPI v4.1.4"})",
      R"([1,0]<stdout>:{"type":"allreduce","rank":0,"bytes":1048576,"ok":true,"mismatches":0,"first_bad":-1,"us":812.5})",
      R"([1,1]<stdout>:{"type":"allreduce","rank":1,"bytes":1048576,"ok":false,"mismatches":3,"first_bad":9,"us":800.0})",
      R"([1,0]<stdout>:{"type":"pair","rank":0,"peer":1,"round":0,"ok":true,"latency_us":21.25,"bandwidth_gbps":1.8125,"lat_bytes":8,"bw_bytes":4194304,"iters":20})",
      R"([1,0]<stdout>:{"type":"done","rank":0,"failures":0})",
      R"([1,1]<stdout>:{"type":"done","rank":1,"failures":1})",
  });
  EXPECT_TRUE(o.problems.empty());
  EXPECT_TRUE(o.other.empty());
  ASSERT_EQ(o.hellos.size(), 2u);
  EXPECT_EQ(o.hellos[1].host, "node2");
  EXPECT_EQ(o.hellos[0].size, 2);
  EXPECT_EQ(o.hellos[0].library, "Open MPI v4.1.4");
  EXPECT_TRUE(o.allreduce[0].ok);
  EXPECT_FALSE(o.allreduce[1].ok);
  EXPECT_EQ(o.allreduce[1].mismatches, 3);
  ASSERT_EQ(o.pairs.size(), 1u);
  EXPECT_DOUBLE_EQ(o.pairs[0].latency_us, 21.25);
  EXPECT_DOUBLE_EQ(o.pairs[0].bandwidth_gbps, 1.8125);
  EXPECT_EQ(o.pairs[0].bw_bytes, 4194304);
  EXPECT_EQ(o.done[1], 1);
}

TEST(ParseMpiProbeOutput, ReadsTheLinesOfASlurmStepByTheirLabel) {
  MpiProbeOutput o = ParseMpiProbeOutput({
      R"(1: {"type":"hello","rank":1,"size":2,"host":"node2","pid":8,"library":"Open MPI v4.1.4"})",
      R"(0: {"type":"hello","rank":0,"size":2,"host":"node1","pid":7,"library":"Open MPI v4.1.4"})",
      R"(0: {"type":"done","rank":1,"failures":0})",
      "srun: error: node2: task 1: Exited with exit code 3",
  });
  ASSERT_EQ(o.hellos.size(), 2u);
  EXPECT_EQ(o.hellos[1].host, "node2");
  ASSERT_EQ(o.problems.size(), 1u);  // rank 0's label on rank 1's line
  EXPECT_THAT(o.problems[0], HasSubstr("written by rank 0 but says rank 1"));
  ASSERT_EQ(o.other.size(), 1u);
  EXPECT_EQ(o.other[0], "srun: error: node2: task 1: Exited with exit code 3");
}

TEST(ParseMpiProbeOutput, KeepsOpenMpisOwnLinesInOrderAndUntagged) {
  MpiProbeOutput o = ParseMpiProbeOutput({
      "--------------------------------------------------------------------------",
      "[1,1]<stderr>:WARNING: Open MPI failed to TCP connect to a peer MPI process.",
      "{\"not\":\"ours\"}",
      "ssh: connect to host 10.42.0.3 port 22: Connection refused",
  });
  ASSERT_EQ(o.other.size(), 4u);
  EXPECT_EQ(o.other[1], "WARNING: Open MPI failed to TCP connect to a peer MPI process.");
  EXPECT_EQ(o.other[2], "{\"not\":\"ours\"}");
  EXPECT_TRUE(o.hellos.empty());
}

TEST(ParseMpiProbeOutput, NamesBadProbeLinesInsteadOfTrustingThem) {
  MpiProbeOutput o = ParseMpiProbeOutput({
      R"({"type":"pair","rank":0,"peer":"one","ok":true})",
      R"({"type":"hello","size":2})",
      R"([1,3]<stdout>:{"type":"done","rank":2,"failures":0})",
      R"({"type":"pair","rank":1,"peer":1,"ok":true})",
  });
  ASSERT_EQ(o.problems.size(), 4u);
  EXPECT_NE(o.problems[0].find("\"peer\" has the wrong type"), std::string::npos);
  EXPECT_NE(o.problems[1].find("no \"rank\""), std::string::npos);
  EXPECT_NE(o.problems[2].find("written by rank 3 but says rank 2"), std::string::npos);
  EXPECT_NE(o.problems[3].find("bad peer"), std::string::npos);
  EXPECT_TRUE(o.pairs.empty());
  EXPECT_TRUE(o.done.empty());
}

TEST(FindMpiPair, PrefersTheLowerRanksLineAndFallsBackToThePeers) {
  MpiProbeOutput o = ParseMpiProbeOutput({
      R"({"type":"pair","rank":2,"peer":0,"ok":false,"error":"receive of 8 bytes: timeout after 10 s"})",
      R"({"type":"pair","rank":0,"peer":2,"ok":false,"error":"send of 8 bytes: timeout after 10 s"})",
      R"({"type":"pair","rank":3,"peer":1,"ok":false,"error":"echo of 8 bytes: timeout after 10 s"})",
  });
  ASSERT_NE(FindMpiPair(o, 0, 2), nullptr);
  EXPECT_EQ(FindMpiPair(o, 0, 2)->rank, 0);
  ASSERT_NE(FindMpiPair(o, 1, 3), nullptr);
  EXPECT_EQ(FindMpiPair(o, 1, 3)->error, "echo of 8 bytes: timeout after 10 s");
  EXPECT_EQ(FindMpiPair(o, 0, 1), nullptr);
}

// The index answers as the scan does, for every pair, with lines written
// twice, by either side, and by no rank of the job.
TEST(MpiPairIndex, AnswersAsFindMpiPairDoesForEveryPair) {
  MpiProbeOutput o = ParseMpiProbeOutput({
      R"({"type":"pair","rank":2,"peer":0,"ok":false,"error":"receive: timeout"})",
      R"({"type":"pair","rank":0,"peer":2,"ok":false,"error":"send: timeout"})",
      R"({"type":"pair","rank":3,"peer":1,"ok":false,"error":"echo: timeout"})",
      R"({"type":"pair","rank":1,"peer":0,"ok":true,"latency_us":5})",
      R"({"type":"pair","rank":1,"peer":0,"ok":false,"error":"written again"})",
      R"({"type":"pair","rank":9,"peer":0,"ok":true,"latency_us":5})",
  });
  ASSERT_EQ(o.pairs.size(), 6u);
  const int ranks = 4;
  MpiPairIndex index(o, ranks);
  int found = 0;
  for (int a = 0; a < ranks; ++a) {
    for (int b = 0; b < ranks; ++b) {
      EXPECT_EQ(index.Find(a, b), FindMpiPair(o, a, b)) << a << "-" << b;
      found += index.Find(a, b) != nullptr;
    }
  }
  EXPECT_EQ(found, 6);  // 0-2, 1-3, 0-1 each way round
  EXPECT_EQ(index.Find(0, 1)->error, "");
  EXPECT_EQ(index.Find(0, 9), nullptr);
}

}  // namespace
}  // namespace cc
