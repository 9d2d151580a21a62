"""Warm previews in one long MCP session against cold ones, side by side (issue 15).

One `xcsh serve` is driven over stdio by the official MCP Python SDK, as an agent host would:
a first call (`ast_grep` for every function, which parses nearly every file), then
`ast_edit` previews of the ten benchmark patterns (each discarded through `resolve`). The
same previews are timed in a server started with `--cache-mb 0`, where every call is cold.
Runs alternate cold and warm servers; each pattern's median warm time is divided by its
median cold time. A server without a cache parses a Rust file only around where a match can
be, which a server that keeps trees cannot (it keeps whole ones, for later patterns), so each
pattern is also timed as the only call of a fresh server with the cache on ("first": what the
warm call saves within one session). In the warm server a file is then edited and the next answer must see it,
and both servers' peak memory (VmHWM) is read.

Every preview's `structuredContent` is measured: the SDK validates it against the tool's
declared `outputSchema` (a mismatch fails the run), and the largest must stay within
`--structured-limit` bytes (64 KiB), the widest preview of the corpus included. Outside
`--smoke`, a pattern whose median warm call is slower than its median cold call fails the
run: a cache that costs more than it saves is a bug.

    .venv/bin/python bench/warm_bench.py --xcsh target/release/xcsh --corpus DIR \
        --work DIR --runs 3 --cache-mb 256 --out bench/results/warm.json [--smoke]

Exit status 0 when every run worked and the edit was seen, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_bench import PATTERNS, SMOKE_PATTERNS  # noqa: E402

FIRST_CALL = {"pat": "fn $F($$$A) { $$$B }", "lang": "rust"}
MARKER = "zzqq_warm_marker"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def vm_hwm_kib(root: str) -> int | None:
    """Peak RSS of the `xcsh serve` whose command line names `root`."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            if b"serve" in cmd and root.encode() in cmd:
                for line in (proc / "status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            continue
    return None


async def serve(xcsh: str, root: str, cache_mb: int, body):
    params = StdioServerParameters(
        command=xcsh, args=["serve", "--root", root, "--cache-mb", str(cache_mb)])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await body(session)
            return result, vm_hwm_kib(root)


def text_of(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


# The largest `structuredContent` seen per pattern, in bytes of JSON.
STRUCTURED: dict[str, int] = {}


async def preview(session, pat: str, out: str) -> float:
    start = time.perf_counter()
    # The SDK validates structuredContent against the declared outputSchema here.
    result = await session.call_tool(
        "ast_edit", {"ops": [{"pat": pat, "out": out}], "lang": "rust"})
    took = time.perf_counter() - start
    if result.is_error:
        raise RuntimeError(f"ast_edit `{pat}` failed: {text_of(result)[:300]}")
    size = len(json.dumps(result.structured_content, separators=(",", ":")))
    STRUCTURED[pat] = max(STRUCTURED.get(pat, 0), size)
    if text_of(result).startswith("AST Edit preview"):
        await session.call_tool("resolve", {"action": "discard", "reason": "benchmark"})
    return took


async def matches(session, pat: str) -> int:
    result = await session.call_tool("ast_grep", {"pat": pat, "lang": "rust"})
    text = text_of(result)
    if text.startswith("No matches"):
        return 0
    return int(text.split()[0])


async def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--xcsh", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--cache-mb", type=int, default=256)
    p.add_argument("--out")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--structured-limit", type=int, default=64 * 1024)
    args = p.parse_args()

    chosen = [x for x in PATTERNS if not args.smoke or x[0] in SMOKE_PATTERNS]
    # A copy: the edit check writes to it.
    root = Path(args.work) / "warm-corpus"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(args.corpus, root, symlinks=True)
    root_s = str(root)

    cold: dict[str, list[float]] = {name: [] for name, *_ in chosen}
    warm: dict[str, list[float]] = {name: [] for name, *_ in chosen}
    first_call: dict[str, list[float]] = {name: [] for name, *_ in chosen}
    peaks = {"cold": [], "warm": []}
    for run in range(args.runs):
        for name, pat, out, _ in chosen:
            async def first_body(session, pat=pat, out=out):
                return await preview(session, pat, out)
            took, _ = await serve(args.xcsh, root_s, args.cache_mb, first_body)
            first_call[name].append(took)

        async def cold_body(session):
            for name, pat, out, _ in chosen:
                cold[name].append(await preview(session, pat, out))
        _, peak = await serve(args.xcsh, root_s, 0, cold_body)
        peaks["cold"].append(peak)

        async def warm_body(session):
            start = time.perf_counter()
            await session.call_tool("ast_grep", FIRST_CALL)
            first = time.perf_counter() - start
            for name, pat, out, _ in chosen:
                warm[name].append(await preview(session, pat, out))
            return first
        first, peak = await serve(args.xcsh, root_s, args.cache_mb, warm_body)
        peaks["warm"].append(peak)
        log(f"run {run + 1}/{args.runs}: first call {first * 1e3:.0f} ms; " + ", ".join(
            f"{n} {cold[n][-1] * 1e3:.0f}/{first_call[n][-1] * 1e3:.0f}/{warm[n][-1] * 1e3:.0f} ms"
            for n, *_ in chosen) + " (cold/first/warm)")

    # An edit between two calls changes the next answer (a new match in a cached file).
    async def edit_body(session):
        await session.call_tool("ast_grep", FIRST_CALL)
        target = next(root.rglob("*.rs"))
        before = await matches(session, f"{MARKER}($A)")
        time.sleep(0.05)
        with open(target, "a", encoding="utf-8") as f:
            f.write(f"\nfn zzqq_warm() {{ {MARKER}(1); }}\n")
        after = await matches(session, f"{MARKER}($A)")
        return before, after, str(target.relative_to(root))
    (before, after, edited), _ = await serve(args.xcsh, root_s, args.cache_mb, edit_body)
    edit_seen = before == 0 and after == 1
    log(f"edit between two calls: {before} match(es) before, {after} after in {edited}: "
        f"{'seen' if edit_seen else 'NOT SEEN'}")

    rows = []
    for name, pat, _, what in chosen:
        c, w = statistics.median(cold[name]), statistics.median(warm[name])
        f = statistics.median(first_call[name])
        rows.append({"name": name, "pattern": pat, "what": what, "cold_median_s": c,
                     "warm_median_s": w, "warm_over_cold": w / c,
                     "first_median_s": f, "warm_over_first": w / f,
                     "cold_s": cold[name], "warm_s": warm[name], "first_s": first_call[name]})
    ratio = statistics.median(r["warm_over_cold"] for r in rows)
    over_first = statistics.median(r["warm_over_first"] for r in rows)
    for row in rows:
        row["structured_bytes"] = STRUCTURED.get(row["pattern"], 0)
    widest = max(rows, key=lambda r: r["structured_bytes"])
    slower = [r["name"] for r in rows if r["warm_median_s"] > r["cold_median_s"]]
    report = {
        "runs": args.runs, "cache_mb": args.cache_mb, "patterns": rows,
        "max_structured_bytes": widest["structured_bytes"],
        "widest_structured": widest["name"],
        "warm_slower_than_cold": slower,
        "median_warm_over_cold": ratio,
        "worst_warm_over_cold": max(r["warm_over_cold"] for r in rows),
        "median_warm_over_first": over_first,
        "peak_rss_kib": {k: max(v) if all(v) else None for k, v in peaks.items()},
        "edit_seen": edit_seen,
    }
    log(f"median warm/cold {ratio:.3f}, warm/first {over_first:.3f}; peak RSS cold {report['peak_rss_kib']['cold']} KiB, "
        f"warm {report['peak_rss_kib']['warm']} KiB (budget {args.cache_mb} MiB)")
    log(f"largest structuredContent {widest['structured_bytes']} bytes ({widest['name']}; "
        f"limit {args.structured_limit})")
    ok = edit_seen
    if widest["structured_bytes"] > args.structured_limit:
        log(f"FAIL: structuredContent of {widest['name']} is {widest['structured_bytes']} bytes, "
            f"over {args.structured_limit}")
        ok = False
    if slower:
        log(f"{'note' if args.smoke else 'FAIL'}: warm slower than cold for {', '.join(slower)}")
        ok = ok and args.smoke
    text = json.dumps(report, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    else:
        print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
