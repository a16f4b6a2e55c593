#include "orchestrator/transport/shell_notice.h"

#include "common/shell_frame.h"

namespace cc {

namespace {
constexpr size_t kEvidenceChars = 2000;
}  // namespace

NodeResult ShellNotice(const std::string& node, const std::string& text, double startup_s) {
  const std::string fix =
      "keep non-interactive shells quiet: guard output in ~/.bashrc with "
      "[[ $- == *i* ]]";
  // The verdict's next step (analysis reads evidence["next_step"]): the same
  // words for every node, so that nodes with the same fault fold into one.
  NodeResult r = NodeCheck(
      "connect", node, "shell", Outcome::kWarn,
      "the login shell prints text for non-interactive commands: \"" + QuoteShellText(text) +
          "\"; clustercheck set it aside and checked the node, but scp, sftp, "
          "rsync and mpirun can break on it. Keep non-interactive shells quiet: "
          "guard output in ~/.bashrc with [[ $- == *i* ]]",
      {{"text", text.substr(0, kEvidenceChars)},
       {"shell_startup_s", startup_s},
       {"next_step", fix + " (module, conda and mail notices included)"}},
      "prints text");
  r.expected = "quiet";
  return r;
}

}  // namespace cc
