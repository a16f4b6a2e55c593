// The inline stylesheet of the HTML report (html.cc). Colours of the
// outcomes match heatmap_svg.cc's OutcomeColour.
#pragma once

namespace cc {

inline constexpr const char* kReportCss = R"css(
:root { --pass:#2e9e5b; --warn:#e3b505; --fail:#d64545; --hang:#8e44ad;
  --skip:#b8bcc2; --error:#ef8a2e; --ink:#1d232b; --muted:#5f6b7a; --line:#e3e6ea;
  --bg:#f6f7f9; --card:#fff; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1320px; margin: 0 auto; padding: 0 24px 48px; }
code, pre, .mono { font-family: ui-monospace, Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
header.top { color:#fff; padding: 22px 24px 18px; margin-bottom: 0; }
header.top .inner { max-width: 1320px; margin: 0 auto; }
header.top.s-pass { background: linear-gradient(135deg, #23804a, #2e9e5b); }
header.top.s-warn { background: linear-gradient(135deg, #a88400, #c79e07); }
header.top.s-fail { background: linear-gradient(135deg, #a52e2e, #d64545); }
header.top .word { font-size: 30px; font-weight: 800; letter-spacing: .04em; margin-right: 14px; }
header.top .line { font-size: 17px; font-weight: 500; }
header.top .sub { opacity: .9; margin-top: 6px; }
.counts { margin-top: 12px; display:flex; gap:8px; flex-wrap: wrap; }
.counts span { background: rgba(255,255,255,.18); border-radius: 999px; padding: 2px 10px; font-weight:600; }
nav { position: sticky; top: 0; z-index: 2; background: #fff; border-bottom: 1px solid var(--line);
  padding: 8px 24px; }
nav .inner { max-width: 1320px; margin: 0 auto; display:flex; gap: 18px; }
nav a { color: var(--muted); text-decoration: none; font-weight: 600; }
nav a:hover { color: var(--ink); }
h2 { font-size: 18px; margin: 28px 0 12px; }
h2 small { color: var(--muted); font-weight: 500; font-size: 13px; margin-left: 6px; }
.badge { display:inline-block; min-width: 46px; text-align:center; border-radius: 4px;
  padding: 1px 6px; color:#fff; font-weight:700; font-size: 11px; letter-spacing:.05em; }
.b-pass{background:var(--pass)} .b-warn{background:var(--warn)} .b-fail{background:var(--fail)}
.b-hang{background:var(--hang)} .b-skip{background:var(--skip)} .b-error{background:var(--error)}
.verdicts { display:grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 10px; }
.v { background: var(--card); border:1px solid var(--line); border-left: 5px solid var(--fail);
  border-radius: 6px; padding: 10px 14px; }
.v.s-hang{border-left-color:var(--hang)} .v.s-warn{border-left-color:var(--warn)}
.v.s-error{border-left-color:var(--error)} .v.s-skip{border-left-color:var(--skip)}
.v .head { display:flex; align-items:center; gap: 8px; }
.v .kind { font-weight: 700; }
.v .where { color: var(--muted); margin-left:auto; }
.v .summary { margin: 6px 0 4px; }
.v .next { background: #f0f5ff; border-radius: 4px; padding: 4px 8px; }
.v .next b { color: #2450a6; }
details { margin-top: 6px; }
details summary { cursor: pointer; color: var(--muted); }
pre { background: #f4f5f7; border-radius: 4px; padding: 8px; overflow: auto; max-height: 280px; margin: 6px 0 0; }
.ok { background: var(--card); border:1px solid var(--line); border-left: 5px solid var(--pass);
  border-radius: 6px; padding: 12px 14px; }
.matrices { display:flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
figure { margin:0; background: var(--card); border:1px solid var(--line); border-radius: 6px; padding: 10px 12px; }
figcaption { font-weight: 700; margin-bottom: 2px; }
figcaption small { display:block; font-weight: 500; color: var(--muted); }
.legend { display:flex; gap: 14px; color: var(--muted); margin: 8px 0 0; flex-wrap: wrap; }
.legend i { display:inline-block; width: 12px; height: 12px; border-radius: 3px; vertical-align: -2px; margin-right: 4px; }
table { border-collapse: collapse; background: var(--card); border:1px solid var(--line); width: 100%; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #fafbfc; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
tr.w-fail td:first-child, tr.w-hang td:first-child { box-shadow: inset 4px 0 var(--fail); }
tr.w-warn td:first-child { box-shadow: inset 4px 0 var(--warn); }
td.odd { background: #fde8e8; font-weight: 700; }
td.no { color: var(--fail); font-weight: 600; }
dl.meta { display:grid; grid-template-columns: max-content 1fr; gap: 4px 18px; background: var(--card);
  border:1px solid var(--line); border-radius: 6px; padding: 12px 14px; margin: 0; }
dl.meta dt { color: var(--muted); }
dl.meta dd { margin: 0; word-break: break-all; }
footer { color: var(--muted); margin-top: 28px; font-size: 12px; }
@media print { nav { display:none; } }
)css";

}  // namespace cc
