#!/usr/bin/env python3
"""Turns the JSON results of one bench/run.sh into Markdown tables (what BENCHMARKS.md
quotes) and checks them against the targets.

Usage: report.py --dir RESULTS_DIR [--out FILE.md]
Reads cli.json, corpora.json, apply.json, micro.json, compile.json and compile-cold.json
from RESULTS_DIR (whichever exist).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import fmt_mib, fmt_s  # noqa: E402


def load(directory: str, name: str) -> dict | None:
    path = os.path.join(directory, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def mark(ok: bool) -> str:
    return "met" if ok else "**missed**"


def git_state(repo: str) -> str:
    def git(*args: str) -> str:
        res = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True,
                             check=False)
        return res.stdout.strip()
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return commit + (" (with uncommitted changes)" if dirty else "")


def paired(row: dict) -> str:
    """The median of the per-run ratios (absent from results made before it was recorded)."""
    return f"{row['speedup_paired']:.2f}×" if "speedup_paired" in row else "n/a"


def cli_section(cli: dict) -> list[str]:
    out = ["## ast_edit preview vs the ast-grep CLI", ""]
    warm = ", after one unmeasured run each" if cli.get("warmup") else ""
    corpus = "a few crates of the pinned Rust corpus" if cli.get("smoke") else "the pinned Rust corpus"
    out.append(f"Corpus: {corpus}; {cli['runs']} timed run(s) per contestant "
               f"per pattern, alternating{warm}; medians. "
               "Speedup = CLI wall / xcsh wall (medians); paired = the median of the runs' "
               "ratios, each pair run back to back. RSS = peak resident memory of the process.")
    out.append("")
    out.append("| pattern | files parsed by xcsh | replacements (files) | xcsh wall | xcsh CPU "
               "| xcsh RSS | CLI wall | CLI CPU | CLI RSS | speedup | paired | same edits |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in cli["patterns"]:
        x, c, e = r["xcsh"], r["cli"], r.get("engine") or {}
        parsed = f"{e['filesParsed']:,} of {e['filesScanned']:,}" if e else "n/a"
        repl = f"{e['replacements']:,} ({e['filesChanged']:,})" if e else "n/a"
        same = "yes" if r["equality"]["identical"] else f"**NO** ({r['equality']['first_difference']})"
        out.append(
            f"| `{r['pattern']}` | {parsed} | {repl} | {fmt_s(x['wall_s'])} | {fmt_s(x['cpu_s'])} "
            f"| {fmt_mib(x['max_rss_kib'])} | {fmt_s(c['wall_s'])} | {fmt_s(c['cpu_s'])} "
            f"| {fmt_mib(c['max_rss_kib'])} | {r['speedup_wall']:.2f}× "
            f"| {paired(r)} | {same} |")
    s = cli["summary"]
    rss_worst = max(cli["patterns"], key=lambda r: r["rss_ratio"])
    out += ["",
            f"- Median speedup over the set: **{s['median_speedup_wall']:.2f}×** "
            f"(target ≥ 3×: {mark(s['median_speedup_wall'] >= 3)}).",
            f"- Worst single pattern: `{s['worst_pattern']}` at **{s['worst_speedup_wall']:.2f}×** "
            f"(target: never slower: {mark(s['worst_speedup_wall'] >= 1)}).",
            *([f"- Paired: median **{s['median_speedup_paired']:.2f}×**, worst "
               f"**{s['worst_speedup_paired']:.2f}×**."] if "worst_speedup_paired" in s else []),
            f"- Peak memory: at most **{s['max_rss_ratio']:.2f}×** the CLI's "
            f"(`{rss_worst['name']}`; target ≤ 1: {mark(s['max_rss_ratio'] <= 1)}).",
            f"- Identical replacements on every pattern: {mark(s['all_identical'])}.",
            ""]
    return out


def corpora_section(cor: dict) -> list[str]:
    out = ["## ast_edit preview vs the ast-grep CLI on real sources, per language", ""]
    warm = ", after one unmeasured run each" if cor.get("warmup") else ""
    out.append(f"One pattern per language on the pinned corpora of `scripts/corpora.json` "
               f"(the language's files only); {cor['runs']} timed run(s) per contestant, "
               f"alternating{warm}; medians. Speedup = CLI wall / xcsh wall. (Peak RSS is in "
               "the JSON but not here: below the Python parent's own RSS, 24-33 MiB, the "
               "kernel reports the parent's, for both.)")
    out.append("")
    out.append("| language | package | files | pattern | files parsed by xcsh | CLI matches "
               "| xcsh wall | CLI wall | speedup (wall) | speedup (CPU) | same edits |")
    out.append("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|")
    for r in cor["patterns"]:
        x, c = r["xcsh"], r["cli"]
        same = "yes" if r["equality"]["identical"] else \
            f"**NO** ({r['equality']['first_difference']})"
        e = r.get("engine") or {}
        parsed = f"{e['filesParsed']:,}" if e else "n/a"
        out.append(
            f"| {r['lang']} | {r['package']} | {r['files']:,} | `{r['pattern']}` "
            f"| {parsed} | {r['cli_matches']:,} | {fmt_s(x['wall_s'])} | {fmt_s(c['wall_s'])} "
            f"| {r['speedup_wall']:.2f}× | {r['speedup_cpu']:.2f}× | {same} |")
    s = cor["summary"]
    out += ["",
            f"- Median speedup over {len(cor['patterns'])} languages: "
            f"**{s['median_speedup_wall']:.2f}×** wall, {s['median_speedup_cpu']:.2f}× CPU "
            f"(the Rust corpus's ≥ 3×: {mark(s['median_speedup_wall'] >= 3)}).",
            f"- Worst language: {s['worst_lang']} at **{s['worst_speedup_wall']:.2f}×** "
            f"(issue 14, the speed-up holds in every language: "
            f"{mark(s['worst_speedup_wall'] >= 1)}).",
            f"- Identical trees on every language: {mark(s['all_identical'])}.",
            ""]
    return out


MICRO_ROWS = [
    ("call/xcsh_session_call", "`Session::call` (xcsh), trivial tool `add`"),
    ("call/rmcp_router_call", "rmcp `ToolRouter::call`, router built once"),
    ("call/rmcp_handler_call_tool", "rmcp `ServerHandler::call_tool`, router in a field"),
    ("call/rmcp_default_server_handler",
     "rmcp `#[tool_router(server_handler)]` default (router rebuilt per call)"),
    ("pending/xcsh_push_then_resolve_apply", "xcsh preview push + `resolve` apply round trip"),
    ("schema/xcsh_tool_parameters", "xcsh `Tool::parameters()`"),
    ("schema/xcsh_custom_tool_parameters", "xcsh `CustomTool::parameters()` (cached per type)"),
    ("schema/xcsh_registry_definitions/anthropic", "xcsh `Registry::definitions(Anthropic)`"),
    ("schema/xcsh_registry_definitions/openai-chat", "xcsh `Registry::definitions(OpenAiChat)`"),
    ("schema/xcsh_registry_definitions/gemini", "xcsh `Registry::definitions(Gemini)`"),
    ("schema/xcsh_registry_definitions/mcp", "xcsh `Registry::definitions(Mcp)`"),
    ("schema/rmcp_router_get", "rmcp `ToolRouter::get` (one tool)"),
    ("schema/rmcp_router_list_all", "rmcp `ToolRouter::list_all` (what `tools/list` returns)"),
]


def apply_section(app: dict) -> list[str]:
    out = ["## Preview plus apply vs `ast-grep --update-all`; the apply alone vs plain writes", ""]
    corpus = "a few crates of the pinned Rust corpus" if app.get("smoke") else "the pinned Rust corpus"
    out.append(f"Corpus: {corpus}; {app['runs']} timed run(s) per contestant per pattern, the "
               "order rotating; every run checked to leave the new bytes, then put back and "
               "synced. Speedup = CLI wall / xcsh wall (medians). Apply alone: the same change "
               "set applied in-process (`xcsh-apply-bench`) against `std::fs::write` of the "
               "same new contents, medians.")
    out.append("")
    out.append("| pattern | files | `--yes` | session | CLI | speedup `--yes` | speedup session "
               "| session / `--yes` | session / `--yes --syntax-guard warn` | apply alone "
               "| plain writes | apply / plain |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in app["patterns"]:
        a = r.get("apply_only")
        tail = (f"{fmt_s(a['apply']['median_s'])} | {fmt_s(a['plain']['median_s'])} "
                f"| {a['ratio']:.2f}×" if a else "n/a | n/a | n/a")
        # Results from before the guarded contestant have no such column.
        guarded = (f"{r['session_over_yes_guard']:.2f}" if "session_over_yes_guard" in r
                   else "n/a")
        out.append(f"| `{r['pattern']}` | {r['files_changed']:,} | {fmt_s(r['yes']['wall_s'])} "
                   f"| {fmt_s(r['session']['wall_s'])} | {fmt_s(r['cli']['wall_s'])} "
                   f"| {r['speedup_yes']:.2f}× | {r['speedup_session']:.2f}× "
                   f"| {r['session_over_yes']:.2f} | {guarded} | {tail} |")
    s = app["summary"]
    out += ["",
            f"- `xcsh ast-edit --yes`: median **{s['median_speedup_yes']:.2f}×**, worst "
            f"**{s['worst_speedup_yes']:.2f}×** (target median ≥ 2×, none slower: "
            f"{mark(s['median_speedup_yes'] >= 2 and s['worst_speedup_yes'] >= 1)}).",
            f"- `xcsh session`: median **{s['median_speedup_session']:.2f}×**, worst "
            f"**{s['worst_speedup_session']:.2f}×** (same target: "
            f"{mark(s['median_speedup_session'] >= 2 and s['worst_speedup_session'] >= 1)}).",
            f"- Session over `--yes`: at most **{s['worst_session_over_yes']:.2f}** "
            f"(target ≤ 1.2: {mark(s['worst_session_over_yes'] <= 1.2)}); over `--yes "
            f"--syntax-guard warn` (the check the session runs by default) at most "
            f"**{s.get('worst_session_over_yes_guard', float('nan')):.2f}**.",
            f"- Apply alone over plain writes: median **{s['median_apply_over_plain']:.2f}×**, "
            f"worst **{s['worst_apply_over_plain']:.2f}×**.",
            f"- Identical trees on every pattern: {mark(s['all_identical'])}.", ""]
    widest = max((r for r in app["patterns"] if r.get("apply_only")),
                 key=lambda r: r["files_changed"], default=None)
    if widest:
        a = widest["apply_only"]
        out += [f"Where the apply's time goes on `{widest['pattern']}` ({a['files']:,} files, "
                f"{a['bytes']:,} bytes; medians per phase):", "",
                "| phase | time |", "|---|---:|"]
        out += [f"| {p['phase']} | {fmt_s(p['median_s'])} |" for p in a["phases"][:14]]
        out.append("")
    return out


def fmt_ns(seconds: float) -> str:
    ns = seconds * 1e9
    return f"{ns / 1000:.2f} µs" if ns >= 1000 else f"{ns:.0f} ns"


def micro_section(micro: dict) -> list[str]:
    out = ["## Dispatch and schemas in process (divan)", ""]
    out.append(f"Profile `{micro['profile']}`; the whole suite run {micro['rounds']} times, the "
               "median of divan's per-run medians; allocations per iteration from divan's "
               "`AllocProfiler`. Both contestants on one current-thread tokio runtime.")
    out.append("")
    out.append("| benchmark | median time | allocations / iteration |")
    out.append("|---|---:|---:|")
    benches = micro["benches"]
    for key, label in MICRO_ROWS:
        if key in benches:
            b = benches[key]
            out.append(f"| {label} | {fmt_ns(b['median_s'])} | {b['allocs']:.0f} |")
    s = micro["summary"]
    ratio = s.get("session_call_vs_rmcp_router")
    if ratio is not None:
        out += ["", f"- `Session::call` / rmcp router: **{ratio:.2f}×** "
                    f"(target ≤ 1: {mark(ratio <= 1)})."]
    out += [f"- {s['schema_retrieval']} (asserted before the benchmarks run, and by "
            "`xcsh-bench/tests/alloc_free.rs` in every `cargo test`).", ""]
    turns = s.get("turn_vs_bare_calls") or {}
    if turns:
        out += ["A turn of the agent loop (`Session::turn` on a response with two calls of the "
                "trivial tool) against the same two calls made directly, and its two halves "
                "alone:", "",
                "| provider | turn | bare calls | overhead | turn / calls | read the calls "
                "| write the answer | allocations: turn / calls |",
                "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for dialect, t in turns.items():
            parse = fmt_ns(t["parse_s"]) if t.get("parse_s") is not None else "n/a"
            render = fmt_ns(t["render_s"]) if t.get("render_s") is not None else "n/a"
            out.append(f"| {dialect} | {fmt_ns(t['turn_s'])} | {fmt_ns(t['bare_calls_s'])} "
                       f"| {fmt_ns(t['overhead_s'])} | {t['turn_vs_bare_calls']:.2f}× "
                       f"| {parse} | {render} "
                       f"| {t['turn_allocs']:.0f} / {t['bare_calls_allocs']:.0f} |")
        out.append("")
    return out


def compile_section(comp: dict) -> list[str]:
    out = [f"## Compile time: {comp['tools']} tools, `#[custom_tool]` vs rmcp `#[tool]`", ""]
    out.append(f"One crate of {comp['tools']} tools each ({comp['source_lines']['gen-xcsh']:,} "
               f"and {comp['source_lines']['gen-rmcp']:,} source lines), dependencies built "
               f"beforehand; `touch src/lib.rs` then the timed command, {comp['runs']} runs "
               "each, alternating; debug profile"
               + (", incremental compilation off." if not comp.get("quick") else "."))
    out.append("")
    out.append("| command | xcsh wall | xcsh CPU | xcsh RSS | rmcp wall | rmcp CPU | rmcp RSS "
               "| xcsh / rmcp | paired |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for verb in ("check", "build"):
        r = comp["results"][verb]
        x, m = r["xcsh"], r["rmcp"]
        paired_ratio = f"{r['ratio_paired']:.2f}" if "ratio_paired" in r else "n/a"
        out.append(f"| `cargo {verb}` | {fmt_s(x['wall_s'])} | {fmt_s(x['cpu_s'])} "
                   f"| {fmt_mib(x['max_rss_kib'])} | {fmt_s(m['wall_s'])} | {fmt_s(m['cpu_s'])} "
                   f"| {fmt_mib(m['max_rss_kib'])} | {r['ratio_wall']:.2f} | {paired_ratio} |")
    build = comp["results"]["build"]["ratio_wall"]
    out += ["", f"- Building the tools: xcsh / rmcp = **{build:.2f}** "
                f"(target ≤ 1: {mark(build <= 1.0)}).", ""]
    return out


COLD_ROWS = [
    ("gen-xcsh-min", "(a) xcsh, `default-features = false, features = [{features}]`"),
    ("gen-xcsh", "(b) xcsh, default features (tools, mcp, cli)"),
    ("gen-rmcp", "(c) rmcp 3.11.0 `#[tool]`/`#[tool_router]` (`server`, `macros`)"),
]


def cold_section(cold: dict) -> list[str]:
    res = cold["results"]
    s, ratios = res["summary"], res["ratios"]
    out = [f"## Pay for what you use: cold build of a {cold['tools']}-tool crate", ""]
    out.append(f"`cargo build --offline` of a generated crate of {cold['tools']} tools, fresh "
               "target dir before every build (dependencies included), debug profile, "
               f"incremental off; {cold['runs']} runs per variant, the three rotated; medians. "
               "Crates compiled = `Compiling` lines of the build; packages = `cargo tree -e "
               "normal,build` of the crate.")
    out.append("")
    out.append("| variant | wall | CPU | peak RSS | crates compiled | packages | wall / rmcp "
               "| CPU / rmcp |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    r = s["gen-rmcp"]
    for key, label in COLD_ROWS:
        x = s[key]
        label = label.format(features=", ".join(f'"{f}"' for f in
                                                cold["xcsh_features"].split(",")))
        out.append(f"| {label} | {fmt_s(x['wall_s'])} | {fmt_s(x['cpu_s'])} "
                   f"| {fmt_mib(x['max_rss_kib'])} | {x['compiled']} | {x['tree_packages']} "
                   f"| {x['wall_s'] / r['wall_s']:.2f} | {x['cpu_s'] / r['cpu_s']:.2f} |")
    out += ["", f"- a/c = **{ratios['min_vs_rmcp_wall']:.2f}**, b/c = "
                f"**{ratios['default_vs_rmcp_wall']:.2f}** (wall; CPU: "
                f"{ratios['min_vs_rmcp_cpu']:.2f} and {ratios['default_vs_rmcp_cpu']:.2f}).", ""]
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--dir", required=True)
    p.add_argument("--repo", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p.add_argument("--command", default="bench/run.sh")
    p.add_argument("--out")
    args = p.parse_args()
    cli, cor, app, micro, comp, cold = (load(args.dir, n) for n in
                                        ("cli.json", "corpora.json", "apply.json", "micro.json",
                                         "compile.json", "compile-cold.json"))
    any_doc = cli or cor or app or micro or comp or cold
    if not any_doc:
        print(f"no results in {args.dir}", file=sys.stderr)
        return 1
    m = any_doc["machine"]
    lines = ["# Latest benchmark results", "",
             f"Generated by `{args.command}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} "
             f"at commit {git_state(args.repo)}.", "",
             f"Machine: {m['nproc']} cores ({m['cpu_model']}), {m['ram_gib']} GiB RAM; "
             f"load average at start {', '.join(str(x) for x in m['loadavg_at_start'])}.", ""]
    if cli:
        lines += cli_section(cli)
    if cor:
        lines += corpora_section(cor)
    if app:
        lines += apply_section(app)
    if micro:
        lines += micro_section(micro)
    if comp:
        lines += compile_section(comp)
    if cold:
        lines += cold_section(cold)
    text = "\n".join(lines)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
