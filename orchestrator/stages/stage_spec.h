// One row per stage, in the spirit of nccl-tests' table of collectives:
// everything the rest of the controller needs to know about a stage, kept
// in the stage's own folder (stages/<name>/<name>_spec.cc) and gathered in
// the table (stages.h). Adding a stage is adding a folder and a row;
// nothing outside orchestrator/stages/ names a stage.
//
// Every hook is a plain function (no state); unset hooks mean "nothing
// special": the generic rules and wording apply.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/json_read.h"
#include "orchestrator/inventory/stage_settings.h"
#include "orchestrator/stages/stage_estimate.h"
#include "orchestrator/store/run_data.h"

namespace cc {

class Stage;
struct Verdict;
namespace analysis {
class NodeOrder;
}

// What a stage adds to the terminal summary of a run, from its own run
// meta (reports/terminal.cc).
struct StageTerminalNotes {
  // Lines in the "stages" section, after the per-stage counts, without
  // indent ("nccl isolation: 12 NCCL runs ...").
  std::vector<std::string> lines;
  // A section of its own after the stages section, "" for none; starts
  // with "\n" and ends with a newline.
  std::string section;
  // What of the meta could not be read; the terminal prints an error line
  // for each.
  JsonProblems problems;
};

// A table a stage adds to the HTML report after the node table (the
// health stage's one row per node), rendered and escaped by the report.
struct StageReportTable {
  std::string id;     // the HTML anchor ("health")
  std::string title;  // "Health"
  std::string note;   // a line under the title, "" for none
  std::vector<std::string> columns;
  struct Row {
    Outcome outcome = Outcome::kPass;  // the row's colour
    std::vector<std::string> cells;
  };
  std::vector<Row> rows;
  // Preformatted blocks after the table (topology matrices), each with a
  // caption.
  std::vector<std::pair<std::string, std::string>> blocks;
  // What of the results could not be read, each under the node it came
  // from ("n3: gpus: an array expected, ..."); the page prints an error
  // line for each.
  JsonProblems problems;
};

// A pattern the generic pair rules (analysis/analysis_pairs.cc) found in
// one pair check of the stage, for the stage to word (PairWording).
enum class PairPattern {
  kHang,        // pairs hung; nodes: every node of a hung pair
  kBadNode,     // nodes: the one node that fails with (nearly) every partner
  kWidespread,  // failures spread over most of the cluster; nodes: empty
  kOneWay,      // nodes: {src, dst}; src -> dst fails, dst -> src passes
  kBadLink,     // nodes: {a, b}; their link fails, both pass with others
};

struct PairFinding {
  PairPattern pattern = PairPattern::kBadLink;
  const RunData* run = nullptr;
  std::string check;  // the matrix check (stages.h MatrixCheck), "tcp/29500"
  std::vector<std::string> nodes;
  // The evidence of one failing result of the finding ({} when none).
  nlohmann::json evidence = nlohmann::json::object();
  // kBadNode of a directed check: the node fails only as the receiver
  // (only as the sender); both false when it fails both ways.
  bool receiver_only = false;
  bool sender_only = false;
  // kBadNode: its failing states ("filtered, refused") and how many of
  // its partners it fails with ("5 of 7").
  std::string states;
  std::string count;
};

// The stage's words for a finding; "" keeps the generic one. next_step is
// used only where the failing results' own evidence names no step
// (verdict_next_step.h).
struct PairWording {
  std::string kind;  // a verdict kind of analysis.h ("port-blocked")
  std::string summary;
  std::string next_step;
};

struct StageSpec {
  const char* name;
  const char* summary;  // one line: what the stage checks
  // Its [stages.<name>] keys, each row's stage == name (stage_settings.h).
  std::vector<StageSettingKey> settings;
  std::unique_ptr<Stage> (*make)();
  // --dry-run: the stage's work and time when nothing times out, from its
  // own settings (plan.cc adds them up).
  StageEstimate (*estimate)(const PlanInput& input);
  bool in_default = true;    // part of a plain `clustercheck run`
  bool always_runs = false;  // runs even when not asked for (later stages need it)
  // Its pair checks test each direction on its own (A -> B is not B -> A),
  // so that matrices and diffs keep both, even where only one was stored.
  bool pairs_directed = false;

  // The terminal's lines for the stage's run meta (meta[name]; null when
  // it stored none).
  StageTerminalNotes (*summarize)(const nlohmann::json& meta) = nullptr;
  // The matrix a pair result of this stage belongs to ("" = its check).
  std::string (*matrix_check)(const PairResult& result) = nullptr;
  // The MTU most nodes of each subnet have ({"10.42.0.0/24": 9000}), from
  // the stage's run meta, for next steps of MTU problems that do not carry
  // their expected MTU (verdict_next_step.h). For a stage that measures
  // the cluster's networks.
  nlohmann::json (*subnet_mtus)(const nlohmann::json& meta) = nullptr;
  // The next step for a failing node check of the stage, where its
  // evidence names none; `who` are the nodes, folded.
  std::string (*node_fail_next_step)(const NodeResult& result, const std::string& who) = nullptr;
  // A stage that judges its node results itself (parity: one verdict per
  // field against the majority, pins and rules) appends its verdicts here;
  // the generic node rules then take only its results that are `error`.
  void (*node_verdicts)(const RunData& run, const analysis::NodeOrder& order,
                        std::vector<Verdict>& out) = nullptr;
  // Words the generic pair rules' findings for this stage.
  PairWording (*word_pair_finding)(const PairFinding& finding) = nullptr;
  // Keys of the inventory's [expect] that this stage judges (health:
  // ib_rate); parity judges the others.
  std::vector<std::string> expect_keys;
  // A table of its own in the HTML report; nullopt when the run has
  // nothing for it.
  std::optional<StageReportTable> (*report_table)(const RunData& run) = nullptr;

  // The settings' documented defaults as a [stages.<name>] table would
  // hold them; keys the stage works out per run are left out.
  nlohmann::json DocumentedDefaults() const;
};

}  // namespace cc
