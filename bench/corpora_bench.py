#!/usr/bin/env python3
"""ast_edit's preview against the ast-grep CLI on real sources in fourteen more languages:
one pattern per language on the pinned corpora of scripts/corpora.json (the same packages
and directories as xcsh-tools/tests/oracle_corpora.rs), timed like cli_bench.py: the release
`xcsh ast-edit -p P -r R -l LANG` (no `--yes`: the diff is rendered, nothing written) against
`ast-grep run -l LANG -p P -r R --json=stream .`, one unmeasured run each, then alternating
timed runs; then both apply on fresh copies and the trees must be identical.

Each language's tree is the files of its extensions (ast-grep 0.51.1's table) under the
package's directory for it, copied once into WORK/trees/LANG.

Usage (bench/run.sh calls it): corpora_bench.py --xcsh BIN --ast-grep BIN --work DIR
    --runs N --out FILE.json [--corpora DIR] [--only LANG,...] [--smoke]
    [--plan-stats BIN]   (xcsh-plan-stats built with xcsh-tools/all-languages: files parsed)
    [--all-cases]        (every case of oracle_corpora.rs instead of each language's first)

Exit status: 0 when every pattern gave identical trees, 1 when one did not (named), 2 on a
usage or tool error (a corpus not fetched: run scripts/fetch-corpora.sh).
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "scripts"))
from cli_bench import changed_files, first_difference, fresh_copy  # noqa: E402
from fetch_corpora import (  # noqa: E402
    MANIFEST, default_dir, is_verified, language_files, package_dir)
from measure import RunFailed, fmt_mib, fmt_s, log, machine, run, summarize  # noqa: E402

# (language, pattern, rewrite): the first case of each language in oracle_corpora.rs. Fixed:
# results are compared across runs.
PATTERNS = [
    ("java", "System.out.println($A)", "LOG.info(String.valueOf($A))"),
    ("kotlin", "checkNotNull($A)", "requireNotNull($A)"),
    ("c", "memcpy($D, $S, $N)", "memmove($D, $S, $N)"),
    ("cpp", "std::make_shared<$T>($$$A)", "std::allocate_shared<$T>(allocator, $$$A)"),
    ("csharp", "$A == null", "$A is null"),
    ("ruby", "fetch($A)", "translate($A)"),
    ("php", "$A === null", "null === $A"),
    ("bash", "[ -n $A ]", "[[ -n $A ]]"),
    ("lua", "table.insert($T, $V)", "$T[#$T + 1] = $V"),
    ("swift", "CAPLog.print($$$A)", "CAPLog.debug($$$A)"),
    ("scala", "override def $F($$$P) { $$$B }", "override def $F($$$P): Unit = { $$$B }"),
    ("yaml", "name: $N", "full_name: $N"),
    ("html", "<tt>$$$C</tt>", "<code>$$$C</code>"),
    ("css", "color: $C;", "color: var(--hljs-fg, $C);"),
]

SMOKE_LANGS = ("java", "yaml")

ORACLE = os.path.join(REPO, "xcsh-tools", "tests", "oracle_corpora.rs")


def oracle_cases() -> list[tuple[str, str, str]]:
    """Every (language, pattern, rewrite) of oracle_corpora.rs, read from its
    `check("LANG", &[("PAT", "REWRITE"), ...])` calls (plain Rust string literals), so the
    test stays the one list of cases."""
    with open(ORACLE) as f:
        src = f.read()
    cases = []
    for call in re.finditer(r'check\(\s*"(\w+)",\s*&\[(.*?)\]\s*,?\s*\);', src, re.S):
        body = re.sub(r"//[^\n]*", "", call.group(2))
        texts = [codecs.decode(t, "unicode_escape")
                 for t in re.findall(r'"((?:[^"\\]|\\.)*)"', body)]
        cases += [(call.group(1), pat, out) for pat, out in zip(texts[0::2], texts[1::2])]
    if not cases or cases[0] != PATTERNS[0]:
        raise SystemExit(f"corpora_bench.py: cannot read the cases of {ORACLE}")
    return cases

XCSH_OK = (0, 1)  # 0 applied or nothing to do, 1 preview only
CLI_OK = (0, 1)   # 1: nothing matched


def xcsh_cmd(xcsh: str, lang: str, pat: str, out: str, apply: bool) -> list[str]:
    cmd = [xcsh, "ast-edit", "-p", pat, "-r", out, "-l", lang]
    return cmd + ["--yes"] if apply else cmd


def cli_cmd(sg: str, lang: str, pat: str, out: str, apply: bool) -> list[str]:
    cmd = [sg, "run", "-l", lang, "-p", pat, "-r", out]
    return cmd + (["--update-all", "."] if apply else ["--json=stream", "."])


def lay_out(args, manifest: list[dict], lang: str) -> tuple[str, dict, int, int]:
    """WORK/trees/LANG: the language's files, copied once per pinned package."""
    pkg = next(p for p in manifest if lang in p["languages"])
    src_dir = package_dir(args.corpora, pkg)
    if not is_verified(src_dir, pkg):
        raise RunFailed(f"{pkg['name']} {pkg['version']} is not in {args.corpora}: run "
                        "scripts/fetch-corpora.sh (or set XCSH_CORPORA)")
    root = os.path.join(src_dir, pkg["languages"][lang])
    tree = os.path.join(args.work, "trees", lang)
    stamp = f"{pkg['name']}-{pkg['version']}-{pkg['sha256']}"
    stamp_file = tree + ".stamp"
    files = [f for f in language_files(root, lang) if not os.path.islink(f)]
    if not (os.path.isdir(tree) and os.path.exists(stamp_file)
            and open(stamp_file).read() == stamp):
        if os.path.exists(tree):
            shutil.rmtree(tree)
        for f in files:
            dest = os.path.join(tree, os.path.relpath(f, root))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(f, dest)
        with open(stamp_file, "w") as s:
            s.write(stamp)
    return tree, pkg, len(files), sum(os.path.getsize(f) for f in files)


def cli_matches(args, tree: str, lang: str, pat: str, out: str) -> int:
    """How many matches the CLI reports (untimed)."""
    path = os.path.join(args.work, "matches.jsonl")
    with open(path, "w") as f:
        run(cli_cmd(args.ast_grep, lang, pat, out, False), cwd=tree, ok_codes=CLI_OK, stdout=f)
    with open(path) as f:
        return sum(1 for line in f if line.strip())


def time_pattern(args, tree: str, lang: str, pat: str, out: str) -> dict:
    xs, cs = [], []
    contestants = {
        "xcsh": (xcsh_cmd(args.xcsh, lang, pat, out, False), XCSH_OK, xs),
        "cli": (cli_cmd(args.ast_grep, lang, pat, out, False), CLI_OK, cs),
    }
    if not args.smoke:
        for cmd, ok, _ in contestants.values():
            run(cmd, cwd=tree, ok_codes=ok)
    for i in range(args.runs):
        order = ("xcsh", "cli") if i % 2 == 0 else ("cli", "xcsh")
        for who in order:
            cmd, ok, samples = contestants[who]
            samples.append(run(cmd, cwd=tree, ok_codes=ok))
    return {"xcsh": xs, "cli": cs}


def check_equal(args, tree: str, lang: str, pat: str, out: str) -> dict:
    xdir = os.path.join(args.work, "apply-xcsh")
    cdir = os.path.join(args.work, "apply-cli")
    fresh_copy(tree, xdir)
    fresh_copy(tree, cdir)
    run(xcsh_cmd(args.xcsh, lang, pat, out, True), cwd=xdir, ok_codes=(0,))
    run(cli_cmd(args.ast_grep, lang, pat, out, True), cwd=cdir, ok_codes=CLI_OK)
    diff = first_difference(xdir, cdir) or first_difference(cdir, xdir)
    result = {"identical": diff is None, "first_difference": diff,
              "files_changed": changed_files(tree, xdir),
              "files_changed_by_cli": changed_files(tree, cdir)}
    if diff is not None:
        keep = os.path.join(args.work, f"mismatch-{lang}")
        if os.path.exists(keep):
            shutil.rmtree(keep)
        os.makedirs(keep)
        for who, t in (("xcsh", xdir), ("cli", cdir), ("original", tree)):
            src = os.path.join(t, diff)
            if os.path.isfile(src):
                shutil.copy(src, os.path.join(keep, who + "-" + os.path.basename(diff)))
        result["kept_in"] = keep
    return result


def plan_stats(args, tree: str, lang: str, pat: str, out: str) -> dict | None:
    """Files scanned/parsed and replacements, from the engine itself (not timed)."""
    if not args.plan_stats:
        return None
    res = subprocess.run([args.plan_stats, "--root", tree, "--lang", lang,
                          "--pattern", pat, "--rewrite", out],
                         capture_output=True, text=True, check=False)
    if res.returncode != 0:
        log(f"plan-stats failed: {res.stderr.strip()}")
        return None
    return json.loads(res.stdout)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--xcsh", required=True)
    p.add_argument("--ast-grep", required=True)
    p.add_argument("--corpora", default=default_dir())
    p.add_argument("--manifest", default=MANIFEST)
    p.add_argument("--work", required=True)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--out", required=True)
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--only", help="comma-separated languages")
    p.add_argument("--plan-stats")
    p.add_argument("--all-cases", action="store_true",
                   help="every case of oracle_corpora.rs, not only each language's first")
    args = p.parse_args()
    for name in ("corpora", "work", "xcsh", "ast_grep", "manifest", "plan_stats"):
        value = getattr(args, name)
        if value and os.path.exists(value):
            setattr(args, name, os.path.abspath(value))
    os.makedirs(args.work, exist_ok=True)
    with open(args.manifest) as f:
        manifest = json.load(f)["packages"]

    cases = oracle_cases() if args.all_cases else PATTERNS
    chosen = cases
    if args.smoke:
        chosen = [x for x in cases if x[0] in SMOKE_LANGS]
    if args.only:
        wanted = args.only.split(",")
        chosen = [x for x in cases if x[0] in wanted]

    results, mismatches = [], []
    for lang, pat, out in chosen:
        log(f"== {lang}: {pat}  ->  {out}")
        try:
            tree, pkg, nfiles, nbytes = lay_out(args, manifest, lang)
            times = time_pattern(args, tree, lang, pat, out)
            eq = check_equal(args, tree, lang, pat, out)
            matches = cli_matches(args, tree, lang, pat, out)
            stats = plan_stats(args, tree, lang, pat, out)
        except RunFailed as e:
            log(str(e))
            return 2
        x, c = summarize(times["xcsh"]), summarize(times["cli"])
        row = {
            "lang": lang, "pattern": pat, "rewrite": out,
            "package": f"{pkg['name']} {pkg['version']} ({pkg['registry']})",
            "files": nfiles, "bytes": nbytes, "cli_matches": matches,
            "xcsh": x, "cli": c,
            "speedup_wall": c["wall_s"] / x["wall_s"],
            "speedup_cpu": c["cpu_s"] / x["cpu_s"] if x["cpu_s"] > 0 else float("inf"),
            "rss_ratio": x["max_rss_kib"] / c["max_rss_kib"],
            "equality": eq,
            "engine": stats,
            "samples": {k: [s.as_dict() for s in v] for k, v in times.items()},
        }
        results.append(row)
        parsed = f", {stats['filesParsed']} parsed by xcsh" if stats else ""
        log(f"   {nfiles} files{parsed}, {matches} matches | xcsh {fmt_s(x['wall_s'])} wall, "
            f"{fmt_mib(x['max_rss_kib'])} | cli {fmt_s(c['wall_s'])} wall, "
            f"{fmt_mib(c['max_rss_kib'])} | {row['speedup_wall']:.2f}x faster, "
            f"{'identical' if eq['identical'] else 'DIFFERENT'} "
            f"({eq['files_changed']} files changed)")
        if not eq["identical"]:
            mismatches.append((lang, pat, eq))

    if not results:
        log("no language chosen")
        return 2
    speedups = [r["speedup_wall"] for r in results]
    worst = min(results, key=lambda r: r["speedup_wall"])
    summary = {
        "median_speedup_wall": statistics.median(speedups),
        "median_speedup_cpu": statistics.median(r["speedup_cpu"] for r in results),
        "worst_lang": worst["lang"],
        "worst_speedup_wall": worst["speedup_wall"],
        "all_identical": not mismatches,
    }
    doc = {"machine": machine(), "runs": args.runs, "smoke": args.smoke,
           "warmup": not args.smoke, "corpora": args.corpora, "summary": summary,
           "patterns": results}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    log(f"median speedup over {len(results)} patterns {summary['median_speedup_wall']:.2f}x; "
        f"worst {worst['lang']} {worst['speedup_wall']:.2f}x")
    for lang, pat, eq in mismatches:
        log(f"ERROR: `{pat}` ({lang}): xcsh and ast-grep produce different trees; first "
            f"differing file: {eq['first_difference']} (copies kept in {eq.get('kept_in')})")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
