#!/usr/bin/env python3
"""Compile time of N tools written with `#[custom_tool]` against the same N written with
rmcp's `#[tool]` in a `#[tool_router]` impl.

Generates a two-crate workspace from the templates in bench/compile/, builds the
dependencies once, then times `cargo build` and `cargo check` of each crate alone after
touching its lib.rs, alternating the two, several runs each (debug profile, incremental
compilation off, so each timed build compiles the whole crate as a first build or CI would).

With --cold it measures what "pay for what you use" is about instead: a *cold*
`cargo build --offline` (fresh target dir, every dependency compiled) of the same small
crate three ways, alternated run by run: xcsh with `default-features = false` and the
features of --xcsh-features (default: macros), xcsh with its default features (tools, mcp,
cli), and rmcp with its tool macros. It also counts the crates each build compiles (the
"Compiling" lines of cargo's output) and the packages in each crate's `cargo tree`.

Usage (bench/run.sh calls it): compile_bench.py --repo DIR --work DIR --target-dir DIR
    --tools N --runs N --out FILE.json [--xcsh-features LIST] [--cold]
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import RunFailed, Sample, fmt_mib, fmt_s, log, machine, run, summarize  # noqa: E402

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compile")
CRATES = ("gen-xcsh", "gen-rmcp")
# --cold: xcsh with the features asked for, xcsh with its default features, rmcp.
COLD_CRATES = ("gen-xcsh-min", "gen-xcsh", "gen-rmcp")
COMPILING = re.compile(r"^\s*Compiling (\S+) (v\S+)")


def features_spec(features: str) -> str:
    """What follows the path in the xcsh dependency: `default` keeps the default features
    (more may follow: `default,testing`); anything else turns them off and lists these."""
    names = [f.strip() for f in features.split(",") if f.strip()]
    extra = [f for f in names if f != "default"]
    listed = ", ".join(f'"{f}"' for f in extra)
    if "default" in names:
        return f", features = [{listed}]" if extra else ""
    return f", default-features = false, features = [{listed}]"


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


def generate(repo: str, work: str, tools: int, xcsh_crates: dict[str, str]) -> None:
    """Writes the workspace; `repo` is the xcsh source the xcsh crates depend on;
    `xcsh_crates` maps each xcsh crate's name to the features it asks for (the same
    source in each)."""
    def fill(text: str, **values) -> str:
        for key, value in values.items():
            text = text.replace("{" + key + "}", str(value))
        return text

    members = ", ".join(f'"{c}"' for c in [*xcsh_crates, "gen-rmcp"])
    write(os.path.join(work, "Cargo.toml"),
          fill(template("workspace.Cargo.toml"), tools=tools, members=members))
    write(os.path.join(work, "gen-rmcp", "Cargo.toml"), template("gen-rmcp.Cargo.toml"))

    xcsh = [fill(template("gen-xcsh.head.rs"), tools=tools)]
    xcsh += [fill(template("gen-xcsh.tool.rs"), n=n) for n in range(tools)]
    for name, features in xcsh_crates.items():
        write(os.path.join(work, name, "Cargo.toml"),
              fill(template("gen-xcsh.Cargo.toml"), name=name, repo=repo,
                   features=features_spec(features)))
        write(os.path.join(work, name, "src", "lib.rs"), "".join(xcsh))

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


def cold(work: str, target: str, runs: int, env: dict, xcsh_features: str) -> dict:
    """Times a cold `cargo build --offline` of each of COLD_CRATES, `runs` times each,
    rotating the order run by run; the target dir is removed before every build."""
    logs = os.path.join(work, "logs")
    os.makedirs(logs, exist_ok=True)
    manifest = os.path.join(work, "Cargo.toml")
    tree = {}
    for crate in COLD_CRATES:
        # Untimed: resolves the lock offline and lists the build's packages (normal and
        # build dependencies, the host's proc macros included; dev-dependencies are not built).
        out = subprocess.run(["cargo", "tree", "--offline", "--manifest-path", manifest,
                              "-p", crate, "-e", "normal,build", "--prefix", "none",
                              "--no-dedupe"], env=env, check=True, capture_output=True,
                             text=True).stdout
        tree[crate] = len({line.split(" (")[0].strip() for line in out.splitlines()
                           if line.strip()})
    samples = {crate: [] for crate in COLD_CRATES}
    compiled = {}
    for i in range(runs):
        k = i % len(COLD_CRATES)
        order = COLD_CRATES[k:] + COLD_CRATES[:k]
        for crate in order:
            shutil.rmtree(target, ignore_errors=True)
            cmd = ["cargo", "build", "--offline", "--color", "never", "--manifest-path",
                   manifest, "--target-dir", target, "-p", crate]
            log_path = os.path.join(logs, f"{crate}-{i}.log")
            with open(log_path, "w") as out:
                # cargo's progress goes to stderr: merged into the log to count the crates.
                try:
                    sample = run(["sh", "-c", 'exec "$@" 2>&1', "sh", *cmd], env=env,
                                 stdout=out)
                except RunFailed:
                    with open(log_path) as f:
                        log(f.read()[-4000:])
                    raise
            with open(log_path) as f:
                names = [" ".join(m.groups()) for m in map(COMPILING.match, f) if m]
            if crate in compiled and sorted(compiled[crate]) != sorted(names):
                log(f"   note: {crate} compiled {len(names)} crates in run {i}, "
                    f"{len(compiled[crate])} before")
            compiled.setdefault(crate, names)
            samples[crate].append({**sample.as_dict(), "compiled": len(names)})
            log(f"   run {i + 1}/{runs} {crate}: {fmt_s(sample.wall_s)} wall, "
                f"{fmt_s(sample.cpu_s)} CPU, {len(names)} crates compiled")
    shutil.rmtree(target, ignore_errors=True)

    summary = {}
    for crate in COLD_CRATES:
        plain = [Sample(**{k: v for k, v in s.items() if k != "compiled"})
                 for s in samples[crate]]
        summary[crate] = {**summarize(plain), "compiled": len(compiled[crate]),
                          "tree_packages": tree[crate]}
    r = summary["gen-rmcp"]
    ratios = {
        "min_vs_rmcp_wall": summary["gen-xcsh-min"]["wall_s"] / r["wall_s"],
        "default_vs_rmcp_wall": summary["gen-xcsh"]["wall_s"] / r["wall_s"],
        "min_vs_rmcp_cpu": summary["gen-xcsh-min"]["cpu_s"] / r["cpu_s"],
        "default_vs_rmcp_cpu": summary["gen-xcsh"]["cpu_s"] / r["cpu_s"],
    }
    for crate in COLD_CRATES:
        x = summary[crate]
        log(f"   {crate}: {fmt_s(x['wall_s'])} wall, {fmt_s(x['cpu_s'])} CPU, "
            f"{fmt_mib(x['max_rss_kib'])}, {x['compiled']} crates compiled")
    log(f"   xcsh[{xcsh_features}]/rmcp {ratios['min_vs_rmcp_wall']:.2f}, "
        f"xcsh[default]/rmcp {ratios['default_vs_rmcp_wall']:.2f} (wall)")
    return {"variants": {"gen-xcsh-min": f"xcsh, default-features = false, features = "
                                         f"[{xcsh_features}]",
                         "gen-xcsh": "xcsh, default features",
                         "gen-rmcp": "rmcp =3.11.0, features = [server, macros]"},
            "summary": summary, "ratios": ratios, "compiled_crates": compiled,
            "samples": samples}


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
    p.add_argument("--xcsh-features", default=None,
                   help="the xcsh features the generated xcsh crate asks for: `default`, or "
                        "a comma-separated list with the default features off (e.g. "
                        "`macros`); default: `default`, or `macros` with --cold")
    p.add_argument("--cold", action="store_true",
                   help="time cold builds (fresh target dir, dependencies included) of "
                        "xcsh with --xcsh-features, xcsh with its default features, and "
                        "rmcp, instead of rebuilds of the tool crates alone")
    args = p.parse_args()
    if args.xcsh_features is None:
        args.xcsh_features = "macros" if args.cold else "default"
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
    if args.cold:
        generate(xcsh_src, work, args.tools,
                 {"gen-xcsh-min": args.xcsh_features, "gen-xcsh": "default"})
        log(f"== compile (cold): {args.tools} tools per crate in {work}; "
            f"{args.runs} cold builds of each of {', '.join(COLD_CRATES)}")
        try:
            results = cold(work, target, args.runs, env, args.xcsh_features)
        except (RunFailed, subprocess.CalledProcessError) as e:
            log(str(e))
            return 2
        with open(os.path.join(work, "gen-xcsh", "src", "lib.rs")) as f:
            xlines = sum(1 for _ in f)
        with open(os.path.join(work, "gen-rmcp", "src", "lib.rs")) as f:
            rlines = sum(1 for _ in f)
        doc = {"machine": machine(), "mode": "cold", "tools": args.tools, "runs": args.runs,
               "xcsh_features": args.xcsh_features,
               "source_lines": {"gen-xcsh": xlines, "gen-rmcp": rlines},
               "rustc": subprocess.run(["rustc", "--version"], capture_output=True,
                                       text=True).stdout.strip(),
               "results": results}
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
        return 0
    generate(xcsh_src, work, args.tools, {"gen-xcsh": args.xcsh_features})
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
                # Run i of the two crates ran back to back: the median of their ratios is
                # free of the machine's drift across the runs.
                "ratio_paired": statistics.median(
                    a.wall_s / b.wall_s
                    for a, b in zip(samples["gen-xcsh"], samples["gen-rmcp"])),
                "samples": {k: [s.as_dict() for s in v] for k, v in samples.items()},
            }
            log(f"   cargo {verb}: xcsh {fmt_s(x['wall_s'])} wall, {fmt_s(x['cpu_s'])} CPU, "
                f"{fmt_mib(x['max_rss_kib'])} | rmcp {fmt_s(r['wall_s'])} wall, "
                f"{fmt_s(r['cpu_s'])} CPU, {fmt_mib(r['max_rss_kib'])} | "
                f"xcsh/rmcp {results[verb]['ratio_wall']:.2f} "
                f"({results[verb]['ratio_paired']:.2f} paired)")
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
