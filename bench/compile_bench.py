#!/usr/bin/env python3
"""Compile time of N tools written with `#[custom_tool]` against the same N written with
rmcp's `#[tool]` in a `#[tool_router]` impl.

Generates a two-crate workspace from the templates in bench/compile/, builds the
dependencies once, then times `cargo build` and `cargo check` of each crate alone after
touching its lib.rs, alternating the two, several runs each (debug profile, incremental
compilation off, so each timed build compiles the whole crate as a first build or CI would).

Usage (bench/run.sh calls it): compile_bench.py --repo DIR --work DIR --target-dir DIR
    --tools N --runs N --out FILE.json
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import RunFailed, fmt_mib, fmt_s, log, machine, run, summarize  # noqa: E402

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compile")
CRATES = ("gen-xcsh", "gen-rmcp")


def template(name: str) -> str:
    with open(os.path.join(TEMPLATES, name)) as f:
        return f.read()


def write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # Rewrite only when different, so an unchanged tree keeps its fingerprints.
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, "w") as f:
        f.write(text)


def generate(repo: str, work: str, tools: int) -> None:
    """Writes the workspace; `repo` is the xcsh source the xcsh crate depends on."""
    def fill(text: str, **values) -> str:
        for key, value in values.items():
            text = text.replace("{" + key + "}", str(value))
        return text

    write(os.path.join(work, "Cargo.toml"), fill(template("workspace.Cargo.toml"), tools=tools))
    write(os.path.join(work, "gen-xcsh", "Cargo.toml"), fill(template("gen-xcsh.Cargo.toml"), repo=repo))
    write(os.path.join(work, "gen-rmcp", "Cargo.toml"), template("gen-rmcp.Cargo.toml"))

    xcsh = [fill(template("gen-xcsh.head.rs"), tools=tools)]
    xcsh += [fill(template("gen-xcsh.tool.rs"), n=n) for n in range(tools)]
    write(os.path.join(work, "gen-xcsh", "src", "lib.rs"), "".join(xcsh))

    args = [fill(template("gen-rmcp.args.rs"), n=n) for n in range(tools)]
    methods = [fill(template("gen-rmcp.tool.rs"), n=n) for n in range(tools)]
    rmcp = [fill(template("gen-rmcp.head.rs"), tools=tools)] + args
    rmcp += ["\n#[tool_router]\nimpl Server {"] + methods + ["}\n"]
    write(os.path.join(work, "gen-rmcp", "src", "lib.rs"), "".join(rmcp))

    # The workspace's own lock, so both crates build against the versions xcsh is tested with.
    lock = os.path.join(work, "Cargo.lock")
    if not os.path.exists(lock):
        shutil.copy(os.path.join(repo, "Cargo.lock"), lock)


def snapshot(repo: str, dest: str) -> str:
    """Copies the repository's source files (tracked, plus untracked ones not ignored) to
    `dest`, rewriting only files that changed and removing those that are gone, so the xcsh
    the timed crates depend on cannot change under them while the benchmark runs (edits in
    the checkout would otherwise turn a timed build into a rebuild of xcsh itself)."""
    listed = subprocess.run(["git", "-C", repo, "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], check=True, capture_output=True).stdout
    files = {f for f in listed.decode().split("\0") if f and os.path.isfile(os.path.join(repo, f))}
    for rel in files:
        src, dst = os.path.join(repo, rel), os.path.join(dest, rel)
        if os.path.exists(dst) and filecmp.cmp(src, dst, shallow=False):
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)
    for root, _dirs, names in os.walk(dest):
        for name in names:
            rel = os.path.relpath(os.path.join(root, name), dest)
            if rel not in files:
                os.remove(os.path.join(root, name))
    return dest


def cargo(work: str, target: str, verb: str, crate: str) -> list[str]:
    return ["cargo", verb, "--quiet", "--manifest-path", os.path.join(work, "Cargo.toml"),
            "--target-dir", target, "-p", crate]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repo", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--target-dir", required=True)
    p.add_argument("--tools", type=int, default=200)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--out", required=True)
    p.add_argument("--quick", action="store_true",
                   help="smoke test: depend on the checkout itself (no snapshot) and keep "
                        "cargo's incremental setting, so a target dir that already holds "
                        "xcsh's debug build is reused; the timings mean little")
    args = p.parse_args()
    repo, work = os.path.abspath(args.repo), os.path.abspath(args.work)
    target = os.path.abspath(args.target_dir)

    env = dict(os.environ)
    env.pop("RUSTFLAGS", None)
    if args.quick:
        xcsh_src = repo
    else:
        env["CARGO_INCREMENTAL"] = "0"
        # Beside the generated workspace, not in it: a workspace root may not hold another.
        xcsh_src = snapshot(repo, work.rstrip("/") + "-xcsh-src")
    generate(xcsh_src, work, args.tools)
    log(f"== compile: {args.tools} tools per crate in {work}; building dependencies once")
    try:
        # One crate at a time, as timed: building both together would unify their
        # dependencies' features (rmcp's) into a variant neither timed build uses.
        for verb in ("build", "check"):
            for crate in CRATES:
                run(cargo(work, target, verb, crate), env=env)
        results = {}
        for verb in ("check", "build"):
            samples = {crate: [] for crate in CRATES}
            for i in range(args.runs):
                order = CRATES if i % 2 == 0 else tuple(reversed(CRATES))
                for crate in order:
                    os.utime(os.path.join(work, crate, "src", "lib.rs"))
                    samples[crate].append(run(cargo(work, target, verb, crate), env=env))
            x, r = summarize(samples["gen-xcsh"]), summarize(samples["gen-rmcp"])
            results[verb] = {
                "xcsh": x, "rmcp": r, "ratio_wall": x["wall_s"] / r["wall_s"],
                "samples": {k: [s.as_dict() for s in v] for k, v in samples.items()},
            }
            log(f"   cargo {verb}: xcsh {fmt_s(x['wall_s'])} wall, {fmt_s(x['cpu_s'])} CPU, "
                f"{fmt_mib(x['max_rss_kib'])} | rmcp {fmt_s(r['wall_s'])} wall, "
                f"{fmt_s(r['cpu_s'])} CPU, {fmt_mib(r['max_rss_kib'])} | "
                f"xcsh/rmcp {results[verb]['ratio_wall']:.2f}")
    except RunFailed as e:
        log(str(e))
        return 2
    lines = {}
    for crate in CRATES:
        with open(os.path.join(work, crate, "src", "lib.rs")) as f:
            lines[crate] = sum(1 for _ in f)
    doc = {"machine": machine(), "tools": args.tools, "runs": args.runs, "quick": args.quick,
           "source_lines": lines, "results": results}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
