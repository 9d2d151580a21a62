#!/usr/bin/env python3
"""ast_edit's preview (the release `xcsh ast-edit`, no `--yes`) against the ast-grep CLI
(`ast-grep run -l rust -p P -r R --json=stream`) on the same tree, pattern by pattern,
alternating the two; then both apply on scratch copies and the trees must be identical.

Usage (bench/run.sh calls it): cli_bench.py --xcsh BIN --ast-grep BIN --corpus DIR
    --work DIR --runs N --out FILE.json [--plan-stats BIN] [--smoke]

Exit status: 0 when every pattern gave identical replacements, 1 when one did not (the
pattern and the first differing file are named), 2 on a usage or tool error.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import RunFailed, fmt_mib, fmt_s, log, machine, run, summarize  # noqa: E402

# (name, pattern, rewrite, what it stands for). Fixed: results are compared across runs.
PATTERNS = [
    ("unwrap", "$X.unwrap()", '$X.expect("checked")',
     "very common call (~1,150 files contain `unwrap`)"),
    ("arc-new", "Arc::new($A)", "Arc::from($A)", "moderately common path call"),
    ("thread-sleep", "thread::sleep($D)", "std::thread::sleep($D)", "rare (~45 files)"),
    ("nonexistent", "zzqq_nonexistent($A)", "zzqq_renamed($A)",
     "literal text occurs in no file"),
    ("insert-kv", "$M.insert($K, $V)", "$M.insert($V, $K)", "three metavariables"),
    ("match-arms", "match $E { $$$ARMS }", "match ($E) { $$$ARMS }",
     "`$$$` list metavariable, very common keyword"),
    ("self-new-args", "Self::new($$$ARGS)", "Self::create($$$ARGS)", "call with `$$$ARGS`"),
    ("impl-default", "impl Default for $T { $$$BODY }",
     "impl core::default::Default for $T { $$$BODY }", "item-level, several metavariables"),
    ("ntstatus-const", "pub const $N: NTSTATUS = $V;",
     "pub const $N: NTSTATUS = NTSTATUS($V);",
     "matches in the largest files (windows-sys, 36 files, 6 MB)"),
    ("binary-plus", "$A + $B", "$A.wrapping_add($B)", "no usable literal at all"),
]

# Broad structural patterns (issue 27): their only literals are keywords or punctuation, so
# the word prefilter lets most files through; the shape prefilter (engine/prefilter/shape)
# is what keeps them from being parsed.
BROAD_PATTERNS = [
    ("fn-no-params", "fn $F() { $$$B }", "fn $F() -> () { $$$B }", "function without parameters"),
    ("fn-returns", "fn $F($$$P) -> $R { $$$B }", "fn $F($$$P) -> ($R) { $$$B }",
     "function with a return type"),
    ("impl-inherent", "impl $T { $$$B }", "impl $T { /* inherent */ $$$B }",
     "inherent impl (rules out `impl … for …`)"),
    ("closure-one", "|$A| $B", "|$A| ($B)", "closure of one parameter"),
    ("if-else", "if $C { $A } else { $B }", "if !($C) { $B } else { $A }",
     "`if` with an `else` block"),
    ("use", "use $P;", "pub(crate) use $P;", "every private `use`"),
    ("try", "$X?", "($X)?", "the `?` operator"),
    ("match-two-arms", "match $E { $P => $A, _ => $B }",
     "match $E { _ if false => unreachable!(), $P => $A, _ => $B }", "match with two arms"),
    ("let-typed", "let $X: $T = $V;", "let $X = $V as $T;", "`let` with a type"),
    ("struct-literal", "$S { $$$F }", "$S { $$$F, }", "struct literal (and blocks like it)"),
    ("method-chain", "$X.$M().$N()", "($X.$M()).$N()", "two calls without arguments"),
]

SMOKE_PATTERNS = ("unwrap", "nonexistent")
SMOKE_BROAD = ("fn-no-params", "if-else")


def xcsh_cmd(xcsh: str, pat: str, out: str, apply: bool) -> list[str]:
    cmd = [xcsh, "ast-edit", "-p", pat, "-r", out, "-l", "rust"]
    return cmd + ["--yes"] if apply else cmd


def cli_cmd(sg: str, pat: str, out: str, apply: bool) -> list[str]:
    cmd = [sg, "run", "-l", "rust", "-p", pat, "-r", out]
    return cmd + (["--update-all", "."] if apply else ["--json=stream", "."])


# `xcsh ast-edit`: 0 applied or nothing to do, 1 preview only. ast-grep: 1 when nothing matched.
XCSH_OK = (0, 1)
CLI_OK = (0, 1)


def time_pattern(args, pat: str, out: str) -> dict:
    xs, cs = [], []
    contestants = {
        "xcsh": (xcsh_cmd(args.xcsh, pat, out, False), XCSH_OK, xs),
        "cli": (cli_cmd(args.ast_grep, pat, out, False), CLI_OK, cs),
    }
    if not args.smoke:
        # One unmeasured run each, so both start from the same warm page cache.
        for cmd, ok, _ in contestants.values():
            run(cmd, cwd=args.corpus, ok_codes=ok)
    for i in range(args.runs):
        order = ("xcsh", "cli") if i % 2 == 0 else ("cli", "xcsh")
        for who in order:
            cmd, ok, samples = contestants[who]
            samples.append(run(cmd, cwd=args.corpus, ok_codes=ok))
    return {"xcsh": xs, "cli": cs}


def fresh_copy(src: str, dest: str) -> None:
    if os.path.exists(dest):
        shutil.rmtree(dest)
    shutil.copytree(src, dest, symlinks=True)


# xcsh's own state in a tree it applied to (the undo record every apply keeps): not part of
# the edited tree.
STATE_DIR = ".xcsh"


def first_difference(a: str, b: str) -> str | None:
    """The first relative path (in a sorted walk of `a`) whose bytes, kind or presence
    differ between trees `a` and `b`; None when every entry of `a` is the same in `b`.
    xcsh's state directory at the top is left out of both."""
    for root, dirs, files in os.walk(a):
        if root == a:
            dirs[:] = [d for d in dirs if d != STATE_DIR]
        dirs.sort()
        rel_root = os.path.relpath(root, a)
        other_root = os.path.join(b, rel_root)
        if not os.path.isdir(other_root):
            return rel_root
        other_names = set(os.listdir(other_root))
        if rel_root == ".":
            other_names.discard(STATE_DIR)
        names = set(files) | set(dirs)
        extra = sorted(names ^ other_names)
        if extra:
            return os.path.normpath(os.path.join(rel_root, extra[0]))
        for name in sorted(files):
            pa, pb = os.path.join(root, name), os.path.join(other_root, name)
            if os.path.islink(pa) or os.path.islink(pb):
                if os.readlink(pa) != os.readlink(pb):
                    return os.path.normpath(os.path.join(rel_root, name))
                continue
            if not filecmp.cmp(pa, pb, shallow=False):
                return os.path.normpath(os.path.join(rel_root, name))
    return None


def changed_files(orig: str, edited: str) -> int:
    n = 0
    for root, dirs, files in os.walk(edited):
        if root == edited:
            dirs[:] = [d for d in dirs if d != STATE_DIR]
        rel_root = os.path.relpath(root, edited)
        for name in files:
            po = os.path.join(orig, rel_root, name)
            pe = os.path.join(root, name)
            if not os.path.exists(po) or not filecmp.cmp(po, pe, shallow=False):
                n += 1
    return n


def check_equal(args, name: str, pat: str, out: str) -> dict:
    """Applies both on fresh copies and compares the trees byte for byte."""
    xdir = os.path.join(args.work, "apply-xcsh")
    cdir = os.path.join(args.work, "apply-cli")
    fresh_copy(args.corpus, xdir)
    fresh_copy(args.corpus, cdir)
    run(xcsh_cmd(args.xcsh, pat, out, True), cwd=xdir, ok_codes=(0,))
    run(cli_cmd(args.ast_grep, pat, out, True), cwd=cdir, ok_codes=CLI_OK)
    diff = first_difference(xdir, cdir) or first_difference(cdir, xdir)
    result = {"identical": diff is None, "first_difference": diff,
              "files_changed": changed_files(args.corpus, xdir)}
    if diff is not None:
        keep = os.path.join(args.work, f"mismatch-{name}")
        if os.path.exists(keep):
            shutil.rmtree(keep)
        os.makedirs(keep)
        for who, tree in (("xcsh", xdir), ("cli", cdir), ("original", args.corpus)):
            src = os.path.join(tree, diff)
            if os.path.isfile(src):
                shutil.copy(src, os.path.join(keep, who + "-" + os.path.basename(diff)))
        result["kept_in"] = keep
    return result


def plan_stats(args, pat: str, out: str, shape: bool = True) -> dict | None:
    """Files scanned/parsed and replacements, from the engine itself (not timed); with
    `shape=False`, as without the shape prefilter (XCSH_NO_SHAPE_PREFILTER)."""
    if not args.plan_stats:
        return None
    env = dict(os.environ)
    env.pop("XCSH_NO_SHAPE_PREFILTER", None)
    if not shape:
        env["XCSH_NO_SHAPE_PREFILTER"] = "1"
    res = subprocess.run([args.plan_stats, "--root", args.corpus, "--lang", "rust",
                          "--pattern", pat, "--rewrite", out],
                         capture_output=True, text=True, check=False, env=env)
    if res.returncode != 0:
        log(f"plan-stats failed: {res.stderr.strip()}")
        return None
    return json.loads(res.stdout)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--xcsh", required=True)
    p.add_argument("--ast-grep", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--out", required=True)
    p.add_argument("--plan-stats")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--only", help="comma-separated pattern names")
    p.add_argument("--set", choices=("selective", "broad"), default="selective",
                   help="the ten patterns with a selective literal (default), or the broad ones")
    args = p.parse_args()
    # The tools run inside the corpus: make every path absolute first.
    for name in ("corpus", "work", "xcsh", "ast_grep", "plan_stats"):
        value = getattr(args, name)
        if value and os.path.exists(value):
            setattr(args, name, os.path.abspath(value))
    os.makedirs(args.work, exist_ok=True)

    patterns = BROAD_PATTERNS if args.set == "broad" else PATTERNS
    chosen = patterns
    if args.smoke:
        smoke = SMOKE_BROAD if args.set == "broad" else SMOKE_PATTERNS
        chosen = [x for x in patterns if x[0] in smoke]
    if args.only:
        wanted = args.only.split(",")
        chosen = [x for x in patterns if x[0] in wanted]

    results = []
    mismatches = []
    for name, pat, out, what in chosen:
        log(f"== {name}: {pat}  ->  {out}")
        try:
            times = time_pattern(args, pat, out)
            eq = check_equal(args, name, pat, out)
        except RunFailed as e:
            log(str(e))
            return 2
        stats = plan_stats(args, pat, out)
        if stats is not None:
            without = plan_stats(args, pat, out, shape=False)
            if without is not None:
                stats["filesParsedWithoutShape"] = without["filesParsed"]
        x, c = summarize(times["xcsh"]), summarize(times["cli"])
        row = {
            "name": name, "pattern": pat, "rewrite": out, "what": what,
            "xcsh": x, "cli": c,
            "speedup_wall": c["wall_s"] / x["wall_s"],
            "speedup_cpu": c["cpu_s"] / x["cpu_s"] if x["cpu_s"] > 0 else float("inf"),
            # Run i of each contestant ran back to back, so their ratio is free of the
            # machine's drift across the runs: the median of those ratios, beside the ratio
            # of the medians.
            "speedup_paired": statistics.median(
                cs.wall_s / xs.wall_s for xs, cs in zip(times["xcsh"], times["cli"])),
            "rss_ratio": x["max_rss_kib"] / c["max_rss_kib"],
            "equality": eq,
            "engine": stats,
            "samples": {k: [s.as_dict() for s in v] for k, v in times.items()},
        }
        results.append(row)
        log(f"   xcsh {fmt_s(x['wall_s'])} wall, {fmt_s(x['cpu_s'])} CPU, "
            f"{fmt_mib(x['max_rss_kib'])} | cli {fmt_s(c['wall_s'])} wall, "
            f"{fmt_s(c['cpu_s'])} CPU, {fmt_mib(c['max_rss_kib'])} | "
            f"{row['speedup_wall']:.2f}x faster ({row['speedup_paired']:.2f}x paired), "
            f"{'identical' if eq['identical'] else 'DIFFERENT'} ({eq['files_changed']} files changed)")
        if not eq["identical"]:
            mismatches.append((name, pat, eq))

    speedups = sorted(r["speedup_wall"] for r in results)
    n = len(speedups)
    median_speedup = (speedups[n // 2] if n % 2 else (speedups[n // 2 - 1] + speedups[n // 2]) / 2)
    worst = min(results, key=lambda r: r["speedup_wall"])
    summary = {
        "median_speedup_wall": median_speedup,
        "worst_pattern": worst["name"],
        "worst_speedup_wall": worst["speedup_wall"],
        "median_speedup_paired": statistics.median(r["speedup_paired"] for r in results),
        "worst_speedup_paired": min(r["speedup_paired"] for r in results),
        "max_rss_ratio": max(r["rss_ratio"] for r in results),
        "all_identical": not mismatches,
    }
    doc = {"machine": machine(), "set": args.set, "runs": args.runs, "smoke": args.smoke, "warmup": not args.smoke,
           "corpus": args.corpus, "summary": summary, "patterns": results}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    log(f"median speedup {median_speedup:.2f}x; worst {worst['name']} "
        f"{worst['speedup_wall']:.2f}x; max RSS ratio {summary['max_rss_ratio']:.2f}")
    for name, pat, eq in mismatches:
        log(f"ERROR: `{pat}` ({name}): xcsh and ast-grep produce different trees; first "
            f"differing file: {eq['first_difference']} (copies kept in {eq.get('kept_in')})")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
