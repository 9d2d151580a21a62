#!/usr/bin/env python3
"""`apply_patch` (the release `xcsh apply-patch`) against GNU `patch` on the same change:
the apply_patch form for xcsh, the unified diff of the very same edit for GNU patch.

Two workloads, generated (fixed seeds, so runs compare):
  large   one file of 75,000 lines (25,000 functions of 3 lines; 3,000 with --smoke),
          100 hunks spread over it;
  many    400 small files (39 lines each; 20 with --smoke), one hunk per file.

Per workload, alternating the two tools, each run on a fresh copy of the tree:
  preview  `xcsh apply-patch PATCH --root DIR` (no --yes: plans, checks every hunk, prints
           the diff, writes nothing) against `patch --dry-run -p1 -i DIFF`;
  apply    `xcsh apply-patch PATCH --yes --root DIR` (journalled, fsynced, all or nothing,
           with its undo record) against `patch -p1 -i DIFF` (writes file by file, no fsync);
then the two trees applied must be byte-identical (xcsh's .xcsh state aside).

Usage (bench/run.sh calls it): patch_bench.py --xcsh BIN --work DIR --runs N --out FILE.json
    [--smoke]

Exit status: 0 when both tools made identical trees, 1 when they did not (the first
differing file is named), 2 on a usage or tool error (GNU patch missing included).
"""

from __future__ import annotations

import argparse
import difflib
import filecmp
import json
import os
import random
import shutil
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import RunFailed, fmt_s, log, machine, run  # noqa: E402


def large_workload(lines_target: int) -> tuple[dict[str, str], dict[str, str], str]:
    """One big file; 100 hunks, each changing one function's body line."""
    n = lines_target // 3
    before = "".join(f"fn item_{i}() -> u32 {{\n    {i}\n}}\n" for i in range(n))
    step = max(1, n // 100)
    changed = set(range(0, n, step))
    after = "".join(
        f"fn item_{i}() -> u32 {{\n    {i} + 1\n}}\n" if i in changed else
        f"fn item_{i}() -> u32 {{\n    {i}\n}}\n" for i in range(n))
    patch = ["*** Begin Patch", "*** Update File: src/big.rs"]
    for i in sorted(changed):
        patch += ["@@", f" fn item_{i}() -> u32 {{", f"-    {i}", f"+    {i} + 1", " }"]
    patch.append("*** End Patch")
    return {"src/big.rs": before}, {"src/big.rs": after}, "\n".join(patch) + "\n"


def many_workload(files: int) -> tuple[dict[str, str], dict[str, str], str]:
    """Many small files, one hunk each (a rename of one call inside each)."""
    rng = random.Random(7)
    before, after, patch = {}, {}, ["*** Begin Patch"]
    for f in range(files):
        path = f"src/m{f // 50:02}/f{f:04}.py"
        body = [f"def helper_{f}_{k}(x):\n    return x * {k}\n\n" for k in range(13)]
        at = rng.randrange(1, 12)
        old_line = f"    return x * {at}\n"
        new_line = f"    return scale(x, {at})\n"
        b = "".join(body)
        a = b.replace(f"def helper_{f}_{at}(x):\n{old_line}", f"def helper_{f}_{at}(x):\n{new_line}")
        before[path], after[path] = b, a
        patch += [f"*** Update File: {path}", f"@@ def helper_{f}_{at}(x):",
                  f"-{old_line.rstrip(chr(10))}", f"+{new_line.rstrip(chr(10))}"]
    patch.append("*** End Patch")
    return before, after, "\n".join(patch) + "\n"


def unified(before: dict[str, str], after: dict[str, str]) -> str:
    out = []
    for path in sorted(before):
        out += difflib.unified_diff(before[path].splitlines(keepends=True),
                                    after[path].splitlines(keepends=True),
                                    fromfile=f"a/{path}", tofile=f"b/{path}", n=3)
    return "".join(out)


def write_tree(root: str, files: dict[str, str]) -> None:
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", newline="") as f:
            f.write(text)


def fresh(work: str, name: str, template: str) -> str:
    target = os.path.join(work, name)
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(template, target)
    return target


def same_trees(a: str, b: str) -> str | None:
    """None when equal (ignoring .xcsh); else the first difference."""
    cmp = filecmp.dircmp(a, b, ignore=[".xcsh"])
    stack = [("", cmp)]
    while stack:
        prefix, c = stack.pop()
        if c.left_only or c.right_only:
            return f"{prefix}: only in one tree: {c.left_only or c.right_only}"
        _, mismatch, errors = filecmp.cmpfiles(c.left, c.right, c.common_files, shallow=False)
        if mismatch or errors:
            return f"{prefix}/{(mismatch or errors)[0]} differs"
        for name, sub in c.subdirs.items():
            stack.append((f"{prefix}/{name}", sub))
    return None


def bench(args, name: str, before, after, patch: str) -> dict:
    base = os.path.join(args.work, name)
    shutil.rmtree(base, ignore_errors=True)
    template = os.path.join(base, "template")
    write_tree(template, before)
    patch_file = os.path.join(base, "change.patch")
    diff_file = os.path.join(base, "change.diff")
    with open(patch_file, "w") as f:
        f.write(patch)
    with open(diff_file, "w") as f:
        f.write(unified(before, after))
    lines = sum(t.count("\n") for t in before.values())
    hunks = patch.count("\n@@")
    log(f"{name}: {len(before)} files, {lines} lines, {hunks} hunks")

    def xcsh(root: str, apply: bool) -> list[str]:
        cmd = [args.xcsh, "apply-patch", patch_file, "--root", root]
        return cmd + ["--yes"] if apply else cmd

    def gnu(apply: bool) -> list[str]:
        cmd = [args.patch, "-p1", "-s", "--no-backup-if-mismatch", "-i", diff_file]
        return cmd if apply else cmd + ["--dry-run"]

    samples = {k: [] for k in ("xcsh_preview", "patch_preview", "xcsh_apply", "patch_apply")}
    for i in range(args.runs + (0 if args.smoke else 1)):
        warmup = not args.smoke and i == 0
        order = ("xcsh", "patch") if i % 2 == 0 else ("patch", "xcsh")
        for who in order:
            root = fresh(base, f"run-{who}", template)
            if who == "xcsh":
                # Preview only: exit 1 (no terminal to ask on, nothing written).
                p = run(xcsh(root, False), ok_codes=(1,))
                a = run(xcsh(root, True), ok_codes=(0,))
            else:
                p = run(gnu(False), cwd=root)
                a = run(gnu(True), cwd=root)
            if not warmup:
                samples[f"{who}_preview"].append(p.wall_s)
                samples[f"{who}_apply"].append(a.wall_s)
    # The last runs' trees: both must hold exactly the new files.
    difference = same_trees(os.path.join(base, "run-xcsh"), os.path.join(base, "run-patch"))
    expected = os.path.join(base, "expected")
    write_tree(expected, after)
    difference = difference or same_trees(os.path.join(base, "run-xcsh"), expected)
    med = {k: statistics.median(v) for k, v in samples.items()}
    row = {
        "workload": name, "files": len(before), "lines": lines, "hunks": hunks,
        "runs": args.runs, "samples_s": samples, "median_s": med,
        "preview_ratio": med["xcsh_preview"] / med["patch_preview"],
        "apply_ratio": med["xcsh_apply"] / med["patch_apply"],
        "identical": difference is None, "difference": difference,
    }
    log(f"  preview: xcsh {fmt_s(med['xcsh_preview'])}  GNU patch --dry-run "
        f"{fmt_s(med['patch_preview'])}  ratio {row['preview_ratio']:.2f}")
    log(f"  apply:   xcsh {fmt_s(med['xcsh_apply'])}  GNU patch {fmt_s(med['patch_apply'])}  "
        f"ratio {row['apply_ratio']:.2f}")
    if difference:
        log(f"  TREES DIFFER: {difference}")
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--xcsh", required=True)
    ap.add_argument("--patch", default=shutil.which("patch"))
    ap.add_argument("--work", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", required=True)
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    if not args.patch:
        log("patch_bench.py: GNU patch is not installed (apt-get install patch); it is the reference")
        return 2
    os.makedirs(args.work, exist_ok=True)
    lines, files = (3_000, 20) if args.smoke else (75_000, 400)
    rows = []
    try:
        rows.append(bench(args, "large", *large_workload(lines)))
        rows.append(bench(args, "many", *many_workload(files)))
    except RunFailed as e:
        log(f"patch_bench.py: {e}")
        return 2
    print("| workload | files | lines | hunks | xcsh preview | GNU patch --dry-run | ratio | xcsh apply | GNU patch | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        m = r["median_s"]
        print(f"| {r['workload']} | {r['files']} | {r['lines']} | {r['hunks']} | "
              f"{fmt_s(m['xcsh_preview'])} | {fmt_s(m['patch_preview'])} | {r['preview_ratio']:.2f} | "
              f"{fmt_s(m['xcsh_apply'])} | {fmt_s(m['patch_apply'])} | {r['apply_ratio']:.2f} |")
    with open(args.out, "w") as f:
        json.dump({"machine": machine(), "smoke": args.smoke, "rows": rows}, f, indent=1)
    return 0 if all(r["identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
