#include "orchestrator/store/schema_migrations.h"

namespace cc {

// "check" is an SQL keyword, so the column is check_name.
const char* const kSchemaMigrations[5] = {
    // v0 -> v1
    R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at TEXT NOT NULL,
  finished_at TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL,
  exit_code INTEGER NOT NULL DEFAULT -1,
  inventory_path TEXT NOT NULL DEFAULT '',
  inventory_sha256 TEXT NOT NULL DEFAULT '',
  inventory_name TEXT NOT NULL DEFAULT '',
  argv TEXT NOT NULL DEFAULT '',
  version TEXT NOT NULL DEFAULT '',
  meta TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE nodes (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  node TEXT NOT NULL,
  address TEXT NOT NULL DEFAULT '',
  reachable INTEGER NOT NULL DEFAULT 0,
  error TEXT NOT NULL DEFAULT '',
  facts TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY (run_id, node)
);
CREATE INDEX nodes_run ON nodes(run_id);
CREATE TABLE node_results (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  node TEXT NOT NULL,
  stage TEXT NOT NULL,
  check_name TEXT NOT NULL,
  outcome TEXT NOT NULL,
  value TEXT NOT NULL DEFAULT '',
  expected TEXT NOT NULL DEFAULT '',
  message TEXT NOT NULL DEFAULT '',
  evidence TEXT NOT NULL DEFAULT '{}',
  at TEXT NOT NULL
);
CREATE INDEX node_results_run ON node_results(run_id);
CREATE TABLE pair_results (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  stage TEXT NOT NULL,
  src TEXT NOT NULL,
  dst TEXT NOT NULL,
  check_name TEXT NOT NULL,
  outcome TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT '',
  value REAL,
  unit TEXT NOT NULL DEFAULT '',
  message TEXT NOT NULL DEFAULT '',
  evidence TEXT NOT NULL DEFAULT '{}',
  at TEXT NOT NULL
);
CREATE INDEX pair_results_run ON pair_results(run_id);
)sql",
    // v1 -> v2: stage verdicts get their own table. Until v2 a stage stored
    // them as node results with check "verdict:<kind>" in the stage's own
    // words, its nodes, pairs and next step inside the evidence; those rows
    // move here in the words of analysis.h (the stage's word kept as
    // evidence "stage_kind"), so nothing after this step decodes them.
    R"sql(
CREATE TABLE verdicts (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  stage TEXT NOT NULL,
  kind TEXT NOT NULL,
  severity TEXT NOT NULL,
  check_name TEXT NOT NULL DEFAULT '',
  nodes TEXT NOT NULL DEFAULT '[]',
  pairs TEXT NOT NULL DEFAULT '[]',
  summary TEXT NOT NULL DEFAULT '',
  next_step TEXT NOT NULL DEFAULT '',
  evidence TEXT NOT NULL DEFAULT '{}',
  at TEXT NOT NULL
);
CREATE INDEX verdicts_run ON verdicts(run_id);
CREATE TEMP TABLE old_verdicts AS
  SELECT id, run_id, stage, substr(check_name, 9) AS stage_kind, outcome, value, message, at,
         CASE WHEN json_valid(evidence) AND json_type(evidence) = 'object' THEN evidence
              ELSE '{}' END AS ev
  FROM node_results WHERE substr(check_name, 1, 8) = 'verdict:';
INSERT INTO verdicts (run_id, stage, kind, severity, check_name, nodes, pairs, summary,
                      next_step, evidence, at)
  SELECT run_id, stage,
         CASE stage_kind WHEN 'nothing' THEN 'widespread'
                         WHEN 'isolated' THEN 'bad-node'
                         WHEN 'sender' THEN 'bad-node'
                         WHEN 'receiver' THEN 'port-blocked'
                         WHEN 'ephemeral' THEN 'port-blocked'
                         WHEN 'port-everywhere' THEN 'port-blocked'
                         WHEN 'pair' THEN 'bad-link'
                         ELSE stage_kind END,
         outcome, value,
         CASE json_type(ev, '$.nodes') WHEN 'array' THEN json_extract(ev, '$.nodes') ELSE '[]' END,
         CASE json_type(ev, '$.node_pairs') WHEN 'array' THEN json_extract(ev, '$.node_pairs')
                                           ELSE '[]' END,
         message,
         CASE json_type(ev, '$.next_step') WHEN 'text' THEN json_extract(ev, '$.next_step')
                                          ELSE '' END,
         json_set(json_remove(ev, '$.nodes', '$.node_pairs', '$.next_step', '$.kind'),
                  '$.stage_kind', stage_kind),
         at
  FROM old_verdicts ORDER BY id;
DELETE FROM node_results WHERE id IN (SELECT id FROM old_verdicts);
DROP TABLE old_verdicts;
)sql",
    // v2 -> v3: burn-in rounds (issue 16). A burn-in stores every round in
    // the same run; round 0 is what a plain run stores (and what the
    // generic analysis judges), rounds 1.. are the burn-in's.
    R"sql(
ALTER TABLE node_results ADD COLUMN round INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pair_results ADD COLUMN round INTEGER NOT NULL DEFAULT 0;
ALTER TABLE verdicts ADD COLUMN round INTEGER NOT NULL DEFAULT 0;
CREATE INDEX pair_results_run_round ON pair_results(run_id, round);
CREATE INDEX node_results_run_round ON node_results(run_id, round);
)sql",
    // v3 -> v4: pair results stored compactly (issue 14). A run of 256 nodes
    // has about a million pair results, most of them one pair's ports or
    // subnets written together; as rows of their own they took 217 bytes
    // each (242 MB). Now one row per pair and batch (a "pack") holds its
    // results as a JSON array of [check, outcome, state, value, unit,
    // message, evidence, at], where `at` is "" when it is the pack's and
    // `evidence` lacks the members every result of the pack shares
    // (`common`, "{}" for none). pair_results is a view with the old
    // columns, so that SQL over the store reads as before; an expanded
    // result's id is pack id * 4096 + its index (a pack has at most 4096).
    R"sql(
CREATE TABLE pair_packs (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  stage TEXT NOT NULL,
  src TEXT NOT NULL,
  dst TEXT NOT NULL,
  round INTEGER NOT NULL DEFAULT 0,
  at TEXT NOT NULL,
  common TEXT NOT NULL DEFAULT '{}',
  n INTEGER NOT NULL,
  n_value INTEGER NOT NULL,
  items TEXT NOT NULL
);
CREATE INDEX pair_packs_run_round ON pair_packs(run_id, round);
INSERT INTO pair_packs (run_id, stage, src, dst, round, at, common, n, n_value, items)
  SELECT run_id, stage, src, dst, round, at, '{}', 1, value IS NOT NULL,
         json_array(json_array(check_name, outcome, state, value, unit, message,
                               CASE WHEN json_valid(evidence) THEN json(evidence)
                                    ELSE json_quote(evidence) END, ''))
  FROM pair_results ORDER BY id;
DROP TABLE pair_results;
CREATE VIEW pair_results AS
  SELECT p.id * 4096 + j.key AS id, p.run_id AS run_id, p.stage AS stage, p.src AS src,
         p.dst AS dst, json_extract(j.value, '$[0]') AS check_name,
         json_extract(j.value, '$[1]') AS outcome, json_extract(j.value, '$[2]') AS state,
         json_extract(j.value, '$[3]') AS value, json_extract(j.value, '$[4]') AS unit,
         json_extract(j.value, '$[5]') AS message,
         CASE WHEN p.common = '{}' THEN json_extract(j.value, '$[6]')
              ELSE json_patch(p.common, json_extract(j.value, '$[6]')) END AS evidence,
         CASE json_extract(j.value, '$[7]') WHEN '' THEN p.at
              ELSE json_extract(j.value, '$[7]') END AS at,
         p.round AS round
  FROM pair_packs p, json_each(p.items) j;
)sql",
    // v4 -> v5: a stage verdict says whether it is a cause, and of what
    // scope ("node", "link"; "" for a finding): later stages contain a
    // cause, analysis names it before its symptoms (verdict.h). The ports
    // verdicts stored before say so as ports_stage records them now
    // (stored_verdict.h), from the ports' own kind they kept.
    R"sql(
ALTER TABLE verdicts ADD COLUMN cause TEXT NOT NULL DEFAULT '';
UPDATE verdicts SET cause = CASE
    WHEN stage != 'ports' OR severity NOT IN ('fail', 'hang') OR NOT json_valid(evidence) THEN ''
    WHEN json_extract(evidence, '$.stage_kind') IN
         ('isolated', 'sender', 'receiver', 'ephemeral', 'wrong-host', 'node-lost') THEN 'node'
    WHEN json_extract(evidence, '$.stage_kind') IN ('pair', 'one-way') THEN 'link'
    ELSE '' END;
)sql",
};

}  // namespace cc
