#include "common/shell_frame.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace cc {
namespace {

const ShellFrame kFrame = MakeShellFrame("0123456789abcdef");

// What the framed script prints, as sh would print it.
std::string Framed(const std::string& body) {
  return "\n" + kFrame.begin + "\n" + body + "\n" + kFrame.end + "\n";
}

TEST(ShellFrame, AQuietShellGivesTheOutputAndNoNoise) {
  FramedOutput o = ParseFramedOutput(kFrame, Framed("x86_64\nmissing\n"));
  EXPECT_TRUE(o.complete);
  EXPECT_EQ(o.body, "x86_64\nmissing\n");
  EXPECT_EQ(o.noise, "");
}

TEST(ShellFrame, ABannerBeforeTheCommandIsNoiseNotOutput) {
  std::string banner = "Welcome to the Example HPC Center\nYou have mail.\n";
  FramedOutput o = ParseFramedOutput(kFrame, banner + Framed("aarch64\n"));
  EXPECT_TRUE(o.complete);
  EXPECT_EQ(o.body, "aarch64\n");
  EXPECT_EQ(o.noise, "Welcome to the Example HPC Center\nYou have mail.");
}

TEST(ShellFrame, ABannerWithoutNewlineDoesNotHideTheMarker) {
  FramedOutput o = ParseFramedOutput(kFrame, "conda: base" + Framed("ok\n"));
  EXPECT_TRUE(o.complete);
  EXPECT_EQ(o.body, "ok\n");
  EXPECT_EQ(o.noise, "conda: base");
}

TEST(ShellFrame, TextAfterTheEndMarkerIsNoiseToo) {
  FramedOutput o = ParseFramedOutput(kFrame, "hi\n" + Framed("1\n") + "logout: bye\n");
  EXPECT_EQ(o.body, "1\n");
  EXPECT_EQ(o.noise, "hi\nlogout: bye");
}

TEST(ShellFrame, OutputWithoutFinalNewlineAndEmptyOutputAreExact) {
  EXPECT_EQ(ParseFramedOutput(kFrame, Framed("no newline")).body, "no newline");
  FramedOutput empty = ParseFramedOutput(kFrame, Framed(""));
  EXPECT_TRUE(empty.complete);
  EXPECT_EQ(empty.body, "");
}

TEST(ShellFrame, ACutOffCommandIsIncompleteWithWhatCame) {
  FramedOutput o = ParseFramedOutput(kFrame, "motd\n\n" + kFrame.begin + "\npartial\n");
  EXPECT_FALSE(o.complete);
  EXPECT_EQ(o.body, "partial\n");
  EXPECT_EQ(o.noise, "motd");
}

TEST(ShellFrame, OutputWithoutTheBeginMarkerIsAllNoise) {
  FramedOutput o = ParseFramedOutput(kFrame, "sh: 1: not found\n");
  EXPECT_FALSE(o.complete);
  EXPECT_EQ(o.body, "");
  EXPECT_EQ(o.noise, "sh: 1: not found");
}

TEST(ShellFrame, AnotherCommandsMarkersAreNotOurs) {
  ShellFrame other = MakeShellFrame("ffffffffffffffff");
  FramedOutput o = ParseFramedOutput(kFrame, "\n" + other.begin + "\nx\n");
  EXPECT_FALSE(o.complete);
  EXPECT_NE(NewShellFrame().begin, NewShellFrame().begin);
}

// The script really frames when sh runs it, on one line (csh login shells
// reject newlines inside quotes), and keeps the exit status.
TEST(ShellFrame, ShRunsTheFramedScriptAndKeepsItsExitStatus) {
  std::string script = FrameScript(kFrame, "echo out; exit 3");
  EXPECT_EQ(script.find('\n'), std::string::npos) << script;
  std::string cmd = "echo banner; sh -c '";
  for (char c : script) cmd += c == '\'' ? std::string("'\\''") : std::string(1, c);
  cmd += "'";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[256];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  EXPECT_EQ(WEXITSTATUS(status), 3);
  FramedOutput o = ParseFramedOutput(kFrame, out);
  EXPECT_TRUE(o.complete) << out;
  EXPECT_EQ(o.body, "out\n");
  EXPECT_EQ(o.noise, "banner");
}

TEST(ShellFrame, QuotedTextIsOneShortLine) {
  EXPECT_EQ(QuoteShellText("\n Welcome\r\nto X \n"), "Welcome | to X");
  EXPECT_EQ(QuoteShellText("\x1b[1mbold", 100), "?[1mbold");
  EXPECT_EQ(QuoteShellText(std::string(50, 'a'), 10), "aaaaaaaaaa...");
}

}  // namespace
}  // namespace cc
