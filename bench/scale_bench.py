"""Preview time and peak memory against workspace size (issue 15: the 10x corpus).

Builds workspaces of 1, 2, 5 and 10 copies of the corpus side by side (hard links, so the
copies cost no disk and the page cache holds one), then times the terminal preview
(`xcsh ast-edit -p P -r R -l rust`, no --yes, stdout discarded) on each, sizes alternated
in rotated order, and reports per size the median wall time, CPU time and peak RSS, and the
ratios to 1x. The issue asks: time at 10x at most 10.5x the time at 1x, peak memory at most
1.5x.

    python3 bench/scale_bench.py --xcsh target/release/xcsh --corpus DIR --work DIR \
        [--runs 3] [--sizes 1,2,5,10] [--out bench/results/scale.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import run  # noqa: E402

PATTERNS = [
    ("unwrap", "$X.unwrap()", '$X.expect("checked")'),
    ("arc-new", "Arc::new($A)", "Arc::from($A)"),
]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def workspace(corpus: Path, work: Path, copies: int) -> tuple[Path, int]:
    """`copies` hard-linked copies of the corpus under one root; its number of .rs files."""
    root = work / f"x{copies}"
    stamp = root / ".scale-stamp"
    if not stamp.exists():
        subprocess.run(["rm", "-rf", str(root)], check=True)
        root.mkdir(parents=True)
        for i in range(copies):
            subprocess.run(["cp", "-al", str(corpus), str(root / f"copy{i}")], check=True)
        stamp.write_text(str(copies))
    files = sum(1 for _ in root.rglob("*.rs"))
    return root, files


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--xcsh", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--sizes", default="1,2,5,10")
    p.add_argument("--out")
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    work = Path(args.work).resolve()
    roots = {n: workspace(Path(args.corpus), work, n) for n in sizes}
    samples: dict[tuple[str, int], list] = {(name, n): [] for name, *_ in PATTERNS for n in sizes}
    for r in range(args.runs):
        order = sizes[r % len(sizes):] + sizes[:r % len(sizes)]
        for name, pat, out in PATTERNS:
            for n in order:
                root, _ = roots[n]
                cmd = [args.xcsh, "ast-edit", "-p", pat, "-r", out, "-l", "rust",
                       "--root", str(root), str(root)]
                s = run(cmd, cwd=str(root), ok_codes=(0, 1))
                samples[(name, n)].append(s)
                log(f"run {r + 1}: {name} x{n}: {s.wall_s:.2f} s, {s.max_rss_kib / 1024:.0f} MiB")
    result = {"runs": args.runs, "patterns": []}
    for name, pat, _ in PATTERNS:
        rows = []
        for n in sizes:
            ss = samples[(name, n)]
            rows.append({"copies": n, "files": roots[n][1],
                         "wall_s": statistics.median(s.wall_s for s in ss),
                         "cpu_s": statistics.median(s.cpu_s for s in ss),
                         "max_rss_kib": statistics.median(s.max_rss_kib for s in ss),
                         "samples": [s.as_dict() for s in ss]})
        base = rows[0]
        for row in rows:
            row["time_ratio"] = row["wall_s"] / base["wall_s"]
            row["cpu_ratio"] = row["cpu_s"] / base["cpu_s"]
            row["memory_ratio"] = row["max_rss_kib"] / base["max_rss_kib"]
        result["patterns"].append({"name": name, "pattern": pat, "sizes": rows})
        last = rows[-1]
        log(f"{name}: x{last['copies']} time {last['time_ratio']:.2f}x "
            f"(CPU {last['cpu_ratio']:.2f}x), peak memory {last['memory_ratio']:.2f}x of x1")
    # The chart's series: the first pattern.
    result["points"] = [{"files": r["files"], "wall_s": r["wall_s"],
                         "max_rss_kib": r["max_rss_kib"]} for r in result["patterns"][0]["sizes"]]
    text = json.dumps(result, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
