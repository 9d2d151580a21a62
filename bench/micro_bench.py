#!/usr/bin/env python3
"""Runs the divan micro-benchmarks (xcsh-bench/benches/dispatch.rs) several times and
reports the median of each benchmark's median time and its allocations per iteration.

Running the whole suite several times interleaves the contestants (xcsh, rmcp) in time, so
a burst of load from other processes does not land on one of them only.

Usage (bench/run.sh calls it): micro_bench.py --repo DIR --rounds N --out FILE.json
    [--profile dev] [-- DIVAN_ARGS...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import log, machine  # noqa: E402

UNITS = {"ps": 1e-12, "ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}
TREE = "├╰─│ "
ROW = re.compile(r"^(?P<name>\S+)(?:\s+(?P<fastest>[\d.]+ \S+))?$")


def seconds(text: str) -> float:
    value, unit = text.split()
    return float(value) * UNITS[unit]


def count(text: str) -> float:
    return float(text.split()[0])


def parse(output: str) -> dict[str, dict]:
    """Benchmark path (`call/xcsh_session_call`) -> {median_s, allocs}."""
    results: dict[str, dict] = {}
    stack: list[tuple[int, str]] = []
    started = False
    current = None
    pending_metric = None
    for line in output.splitlines():
        if not started:
            started = "fastest" in line and "median" in line
            continue
        # The tree drawing before the name tells the depth; the cells after it are
        # fastest (with the name), slowest, median, mean, samples, iterations.
        col = next((i for i, ch in enumerate(line) if ch not in TREE), len(line))
        cells = line[col:].split("│")
        text = cells[0].strip()
        if not text or len(cells) < 3:
            continue
        if pending_metric is not None:
            # The line after `alloc:` holds counts; the one after that, bytes.
            if current is not None and pending_metric == "alloc":
                results[current]["allocs"] = count(cells[2].strip())
            pending_metric = None
            continue
        if text.endswith(":"):
            pending_metric = text[:-1].strip()
            continue
        m = ROW.match(text)
        if not m or text[0].isdigit():
            continue
        depth = col // 3
        while stack and stack[-1][0] >= depth:
            stack.pop()
        stack.append((depth, m.group("name")))
        path = "/".join(name for _, name in stack)
        if m.group("fastest"):
            results[path] = {"median_s": seconds(cells[2].strip()), "allocs": 0.0}
            current = path
        else:
            current = None
    return results


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repo", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--profile", default="bench")
    p.add_argument("--out", required=True)
    p.add_argument("divan_args", nargs="*")
    args = p.parse_args()

    # Build once, then run the same executable every round: edits to the checkout while the
    # benchmark runs cannot change what is measured between rounds.
    build = ["cargo", "bench", "--no-run", "--message-format=json-render-diagnostics",
             "-p", "xcsh-bench", "--bench", "dispatch", "--profile", args.profile]
    log(f"== micro: {' '.join(build)}")
    res = subprocess.run(build, cwd=args.repo, capture_output=True, text=True, check=False)
    exe = None
    for line in res.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "dispatch":
            exe = msg.get("executable") or exe
    if res.returncode != 0 or not exe:
        log(res.stderr[-4000:])
        log("ERROR: could not build the micro-benchmarks")
        return 1
    cmd = [exe, "--bench", *args.divan_args]
    rounds = []
    schema_note = "schema retrieval: no report (the benchmark did not print one)"
    for i in range(args.rounds):
        log(f"== micro: round {i + 1}/{args.rounds}: {' '.join(cmd)}")
        res = subprocess.run(cmd, cwd=args.repo, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            log(res.stdout[-3000:] + res.stderr[-3000:])
            log("ERROR: the micro-benchmarks failed (see above)")
            return 1
        for line in res.stderr.splitlines():
            if line.startswith("schema retrieval"):
                schema_note = line
        parsed = parse(res.stdout)
        if not parsed:
            log(res.stdout)
            log("ERROR: no benchmark rows found in divan's output")
            return 1
        rounds.append(parsed)

    names = sorted(set().union(*rounds))
    benches = {}
    for name in names:
        times = [r[name]["median_s"] for r in rounds if name in r]
        allocs = [r[name]["allocs"] for r in rounds if name in r]
        benches[name] = {"median_s": statistics.median(times),
                         "round_medians_s": times, "allocs": statistics.median(allocs)}

    def ratio(a: str, b: str) -> float | None:
        if a in benches and b in benches:
            return benches[a]["median_s"] / benches[b]["median_s"]
        return None

    # A turn of the agent loop against the bare calls it makes, per provider: what reading
    # the response and writing the answer add.
    turns = {}
    for name in names:
        prefix = "turn/xcsh_session_turn/"
        if not name.startswith(prefix):
            continue
        dialect = name[len(prefix):]
        bare = benches.get(f"turn/xcsh_bare_calls/{dialect}")
        if bare is None:
            continue
        turn = benches[name]
        turns[dialect] = {
            "turn_s": turn["median_s"], "bare_calls_s": bare["median_s"],
            "overhead_s": turn["median_s"] - bare["median_s"],
            "turn_vs_bare_calls": turn["median_s"] / bare["median_s"],
            "parse_s": benches.get(f"turn/xcsh_parse_calls/{dialect}", {}).get("median_s"),
            "render_s": benches.get(f"turn/xcsh_render_results/{dialect}", {}).get("median_s"),
            "turn_allocs": turn["allocs"], "bare_calls_allocs": bare["allocs"],
        }
    summary = {
        "session_call_vs_rmcp_router": ratio("call/xcsh_session_call", "call/rmcp_router_call"),
        "session_call_vs_rmcp_handler": ratio("call/xcsh_session_call",
                                              "call/rmcp_handler_call_tool"),
        "schema_retrieval": schema_note,
        "turn_vs_bare_calls": turns,
    }
    doc = {"machine": machine(), "profile": args.profile, "rounds": args.rounds,
           "divan_args": args.divan_args, "summary": summary, "benches": benches}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    for name, b in benches.items():
        log(f"   {name:50} {b['median_s'] * 1e9:10.0f} ns  {b['allocs']:5.0f} allocs")
    if summary["session_call_vs_rmcp_router"] is not None:
        log(f"   Session::call / rmcp router: {summary['session_call_vs_rmcp_router']:.2f}")
    for dialect, t in turns.items():
        log(f"   turn {dialect:17} {t['turn_s'] * 1e9:8.0f} ns = bare calls "
            f"{t['bare_calls_s'] * 1e9:8.0f} ns + {t['overhead_s'] * 1e9:6.0f} ns "
            f"({t['turn_vs_bare_calls']:.2f}x)")
    log(f"   {schema_note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
