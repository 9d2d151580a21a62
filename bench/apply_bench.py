#!/usr/bin/env python3
"""Preview plus apply, end to end, against `ast-grep --update-all`; and a durable apply
alone against plain writes of the same bytes.

For each pattern, on one scratch copy of the corpus:
1. untimed: `xcsh ast-edit --yes` applies it once; the files it changed (and their new bytes)
   are noted, the tree is put back, and `ast-grep run --update-all` must leave exactly the
   same tree (else the run fails, naming the first differing file);
2. timed, `--runs` rounds, the order rotating each round: `xcsh ast-edit -p P -r R -l rust
   --yes` (preview rendered to /dev/null, then the journalled apply), the same with
   `--syntax-guard warn` (the check the session's tools run by default: the like-for-like
   terminal run), `xcsh session` replaying
   `ast_edit` then `resolve apply` (each result printed as a JSON line to /dev/null), and
   `ast-grep run -l rust -p P -r R --update-all .`. After every run the changed files must
   hold their new bytes; then the originals are written back, `.xcsh` removed and the disk
   synced (`sync`), so that no contestant pays for another's writes;
3. `xcsh-apply-bench` (in-process): the same change set applied alone against
   `std::fs::write` of the same new contents, with the apply's time by phase.

Usage (bench/run.sh calls it): apply_bench.py --xcsh BIN [--apply-bench BIN] --ast-grep BIN
    --corpus DIR --work DIR --runs N --out FILE.json [--smoke] [--only a,b]

Exit status: 0 when every pattern ran and all three left identical trees, 1 when one did
not, 2 on a usage or tool error.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_bench import BROAD_PATTERNS, PATTERNS  # noqa: E402
from measure import RunFailed, fmt_s, log, machine, run, summarize  # noqa: E402

# Both sets of the preview benchmark: the ten with a selective literal and the broad ones
# (their only literals are keywords and punctuation), which touch many files: the apply's
# share of the whole run is largest there.
SMOKE = ("unwrap", "use")
STATE_DIR = ".xcsh"


def xcsh_yes(args, pat, out):
    return [args.xcsh, "ast-edit", "-p", pat, "-r", out, "-l", "rust", "--yes"]


def xcsh_yes_guard(args, pat, out):
    return xcsh_yes(args, pat, out) + ["--syntax-guard", "warn"]


def xcsh_session(args, script):
    return [args.xcsh, "session", script]


def cli_update(args, pat, out):
    return [args.ast_grep, "run", "-l", "rust", "-p", pat, "-r", out, "--update-all", "."]


def sync():
    subprocess.run(["sync"], check=True)


def snapshot(tree: str, pristine: str) -> dict[str, bytes]:
    """The files of `tree` that differ from `pristine`, with their bytes (`.xcsh` left out)."""
    changed = {}
    for root, dirs, files in os.walk(tree):
        if root == tree:
            dirs[:] = [d for d in dirs if d != STATE_DIR]
        rel_root = os.path.relpath(root, tree)
        for name in files:
            rel = os.path.normpath(os.path.join(rel_root, name))
            with open(os.path.join(root, name), "rb") as f:
                now = f.read()
            try:
                with open(os.path.join(pristine, rel), "rb") as f:
                    was = f.read()
            except FileNotFoundError:
                was = None
            if now != was:
                changed[rel] = now
    return changed


class Trash:
    """Where the benchmark puts what it no longer needs, removed only when every run is done.

    Removing a run's `.xcsh` frees one inode per file the apply replaced (the undo record's
    link to the original is its last one). On ext4 without a journal, the kind of disk these
    machines have, the inode allocator then skips every inode freed in the last one to six
    minutes (`recently_deleted` in fs/ext4/ialloc.c), one buffer look-up each: the next
    xcsh run's temporary files cost 100-200 us apiece to create instead of ~20. That is the
    benchmark's own clean-up taxing the next contestant (the CLI, which creates no file, would
    not pay it), so state is moved aside, which frees nothing, and removed at the end."""

    def __init__(self, work: str):
        self.dir = os.path.join(work, "trash")
        self.taken = 0
        os.makedirs(self.dir, exist_ok=True)

    def take(self, path: str) -> None:
        if os.path.lexists(path):
            while os.path.lexists(os.path.join(self.dir, str(self.taken))):
                self.taken += 1
            os.rename(path, os.path.join(self.dir, str(self.taken)))

    def empty(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


TRASH: Trash | None = None


def put_back(tree: str, pristine: str, changed) -> None:
    for rel in changed:
        shutil.copyfile(os.path.join(pristine, rel), os.path.join(tree, rel))
    state = os.path.join(tree, STATE_DIR)
    if TRASH is not None:
        TRASH.take(state)
    else:
        shutil.rmtree(state, ignore_errors=True)
    sync()


def check_applied(tree: str, expected: dict[str, bytes], who: str, name: str) -> None:
    for rel, data in expected.items():
        with open(os.path.join(tree, rel), "rb") as f:
            if f.read() != data:
                raise RunFailed(f"{name}: after {who}, `{rel}` does not hold the new contents")


def pattern_row(args, name, pat, out, what) -> dict:
    tree = args.tree
    script = os.path.join(args.work, f"session-{name}.jsonl")
    with open(script, "w") as f:
        f.write(json.dumps({"tool": "ast_edit",
                            "args": {"ops": [{"pat": pat, "out": out}], "lang": "rust"}}) + "\n")
        f.write(json.dumps({"tool": "resolve",
                            "args": {"action": "apply", "reason": "benchmark"}}) + "\n")

    # 1. What the change is, and that all three make it.
    run(xcsh_yes(args, pat, out), cwd=tree, ok_codes=(0,))
    expected = snapshot(tree, args.corpus)
    put_back(tree, args.corpus, expected)
    run(cli_update(args, pat, out), cwd=tree, ok_codes=(0, 1))
    by_cli = snapshot(tree, args.corpus)
    differing = sorted(k for k in expected.keys() | by_cli.keys()
                       if expected.get(k) != by_cli.get(k))
    diff = differing[0] if differing else None
    identical = diff is None
    put_back(tree, args.corpus, expected.keys() | by_cli.keys())
    if not expected:
        log(f"   {name}: changes no file")

    contestants = {
        "ast-edit --yes": (xcsh_yes(args, pat, out), (0,)),
        "ast-edit --yes --syntax-guard warn": (xcsh_yes_guard(args, pat, out), (0,)),
        "session": (xcsh_session(args, script), (0,)),
        "ast-grep --update-all": (cli_update(args, pat, out), (0, 1)),
    }
    order = list(contestants)
    samples = {who: [] for who in order}
    for i in range(args.runs):
        turn = order[i % len(order):] + order[:i % len(order)]
        for who in turn:
            cmd, ok = contestants[who]
            samples[who].append(run(cmd, cwd=tree, ok_codes=ok))
            check_applied(tree, expected, who, name)
            put_back(tree, args.corpus, expected)

    apply_only = None
    if expected and args.apply_bench:
        res = subprocess.run([args.apply_bench, "--root", tree, "--lang", "rust",
                              "--pattern", pat, "--rewrite", out, "--runs", str(args.runs),
                              "--trash", TRASH.dir],
                             capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise RunFailed(f"xcsh-apply-bench failed: {res.stderr.strip()}")
        apply_only = json.loads(res.stdout)
        put_back(tree, args.corpus, expected)

    x, g, s, c = (summarize(samples[w]) for w in order)
    paired = lambda a, b: statistics.median(  # noqa: E731
        bs.wall_s / as_.wall_s for as_, bs in zip(samples[a], samples[b]))
    return {
        "name": name, "pattern": pat, "rewrite": out, "what": what,
        "files_changed": len(expected), "identical": identical, "first_difference": diff,
        "yes": x, "yes_guard": g, "session": s, "cli": c,
        "speedup_yes": c["wall_s"] / x["wall_s"],
        "speedup_session": c["wall_s"] / s["wall_s"],
        "speedup_yes_paired": paired("ast-edit --yes", "ast-grep --update-all"),
        "speedup_session_paired": paired("session", "ast-grep --update-all"),
        "session_over_yes": s["wall_s"] / x["wall_s"],
        # The session's tools run the syntax guard by default, `--yes` only when asked.
        "session_over_yes_guard": s["wall_s"] / g["wall_s"],
        "apply_only": apply_only,
        "samples": {k: [v.as_dict() for v in vs] for k, vs in samples.items()},
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--xcsh", required=True)
    p.add_argument("--apply-bench",
                   help="xcsh-apply-bench; without it the apply alone is not measured")
    p.add_argument("--ast-grep", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--out", required=True)
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--only", help="comma-separated pattern names")
    args = p.parse_args()
    # The tools run inside the tree: every path absolute first.
    os.makedirs(args.work, exist_ok=True)
    for name in ("corpus", "work", "xcsh", "ast_grep", "apply_bench"):
        value = getattr(args, name)
        if value and os.path.exists(value):
            setattr(args, name, os.path.abspath(value))
    # One scratch copy, put back file by file after every run.
    global TRASH
    TRASH = Trash(args.work)
    args.tree = os.path.join(args.work, "tree")
    TRASH.take(args.tree)
    shutil.copytree(args.corpus, args.tree, symlinks=True)
    sync()
    try:
        return run_patterns(args)
    finally:
        TRASH.empty()


def run_patterns(args) -> int:

    chosen = [(n, p_, o, w) for n, p_, o, w in PATTERNS + BROAD_PATTERNS]
    if args.smoke:
        chosen = [x for x in chosen if x[0] in SMOKE]
    if args.only:
        wanted = args.only.split(",")
        chosen = [x for x in chosen if x[0] in wanted]

    rows, failed = [], []
    for name, pat, out, what in chosen:
        log(f"== {name}: {pat}  ->  {out}")
        try:
            row = pattern_row(args, name, pat, out, what)
        except RunFailed as e:
            log(str(e))
            return 2
        rows.append(row)
        a = row["apply_only"]
        tail = (f" | apply alone {fmt_s(a['apply']['median_s'])} vs plain writes "
                f"{fmt_s(a['plain']['median_s'])}: {a['ratio']:.2f}x" if a else "")
        log(f"   {row['files_changed']} files | --yes {fmt_s(row['yes']['wall_s'])} "
            f"session {fmt_s(row['session']['wall_s'])} "
            f"cli {fmt_s(row['cli']['wall_s'])} | {row['speedup_yes']:.2f}x / "
            f"{row['speedup_session']:.2f}x faster; session/--yes "
            f"{row['session_over_yes']:.2f} (over --yes --syntax-guard warn "
            f"{row['session_over_yes_guard']:.2f}){tail}"
            f"{'' if row['identical'] else ' | DIFFERENT TREES'}")
        if not row["identical"]:
            failed.append(row)

    med = lambda xs: statistics.median(xs) if xs else float("nan")  # noqa: E731
    applied = [r for r in rows if r["apply_only"]]
    summary = {
        "median_speedup_yes": med([r["speedup_yes"] for r in rows]),
        "worst_speedup_yes": min((r["speedup_yes"] for r in rows), default=float("nan")),
        "median_speedup_session": med([r["speedup_session"] for r in rows]),
        "worst_speedup_session": min((r["speedup_session"] for r in rows),
                                     default=float("nan")),
        "worst_session_over_yes": max((r["session_over_yes"] for r in rows),
                                      default=float("nan")),
        "worst_session_over_yes_guard": max((r["session_over_yes_guard"] for r in rows),
                                            default=float("nan")),
        "median_apply_over_plain": med([r["apply_only"]["ratio"] for r in applied]),
        "worst_apply_over_plain": max((r["apply_only"]["ratio"] for r in applied),
                                      default=float("nan")),
        "all_identical": not failed,
    }
    doc = {"machine": machine(), "runs": args.runs, "smoke": args.smoke,
           "corpus": args.corpus, "summary": summary, "patterns": rows}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    log(f"end to end vs ast-grep --update-all: --yes median {summary['median_speedup_yes']:.2f}x "
        f"(worst {summary['worst_speedup_yes']:.2f}x), session median "
        f"{summary['median_speedup_session']:.2f}x (worst {summary['worst_speedup_session']:.2f}x); "
        f"session/--yes worst {summary['worst_session_over_yes']:.2f} (over --yes "
        f"--syntax-guard warn {summary['worst_session_over_yes_guard']:.2f}); apply alone / plain "
        f"writes median {summary['median_apply_over_plain']:.2f}x")
    for r in failed:
        log(f"ERROR: `{r['pattern']}` ({r['name']}): xcsh and ast-grep leave different trees; "
            f"first differing file: {r['first_difference']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
