#!/usr/bin/env bash
# Every benchmark in one run (see BENCHMARKS.md):
#   1. ast_edit's preview (release `xcsh ast-edit`, no --yes) against the ast-grep CLI 0.51.1
#      on the pinned Rust corpus, pattern by pattern, plus a byte-for-byte check that both
#      apply the same replacements;
#   1b. the same on broad structural patterns (`fn $F() { $$$B }`, `impl $T { … }`, `$X?`,
#      …) whose only literals are keywords or punctuation, with files parsed with and
#      without the shape prefilter (bench/results/broad.json);
#   2. the same preview against the CLI on real sources in fourteen more languages, one
#      pattern each, on the pinned corpora of scripts/corpora.json (fetched and cached by
#      scripts/fetch-corpora.sh), with the same byte-for-byte check;
#   3. warm sessions (bench/warm_bench.py): in one `xcsh serve` driven by the MCP Python SDK,
#      the ten previews after a first call, against the same previews in a server without a
#      cache, at the default cache budget (256 MiB; no warm call may be slower than a cold
#      one) and at 3072 MiB; every preview's structuredContent validated against its
#      outputSchema and at most 64 KiB; and what near misses add to a search that found
#      nothing (xcsh-near-miss-bench);
#   3a. preview plus apply, end to end (bench/apply_bench.py): `xcsh ast-edit --yes` and
#      `xcsh session` (ast_edit, then resolve apply) against `ast-grep --update-all`, on the
#      ten patterns and the eleven broad ones, alternated, every tree checked; and the durable
#      apply alone (xcsh-apply-bench) against `std::fs::write` of the same bytes, with where
#      the apply's time goes (syncs, backups, renames, journal, stale checks, undo record);
#   3c. `edit` (preview + resolve apply through a session) against a plain
#      read-replace-write on a 20,000-line Rust file, and the syntax guard's share of an
#      `edit` preview and of an `ast_edit` preview over the corpus (xcsh-edit-bench);
#   3b. in-process micro-benchmarks (divan): Session::call against rmcp's tool router, the
#      pending round trip, allocation-free schema retrieval;
#   4. compile time of 200 #[custom_tool] tools against the same 200 rmcp #[tool]s;
#   4b. apply_patch (release `xcsh apply-patch`) against GNU patch on the same change (its
#      unified diff): preview (`patch --dry-run`) and apply, for one file of 75,000 lines and
#      for 400 small files, with a byte-for-byte check of the two trees (bench/patch_bench.py;
#      GNU patch from scripts/ensure-gnu-patch.sh);
#   5. opt-in (--cold-build): cold `cargo build --offline` of a 10-tool crate on xcsh with
#      only the macros feature, on xcsh with its default features, and on rmcp's macros.
#
# Usage: bench/run.sh [--smoke] [--only cli,broad,corpora,warm,apply,edit,scale,micro,compile,patch,cold] [--runs N] [--cold-build]
#   (scale is opt-in: --only scale, ~10 min: 1x, 5x and 10x the corpus)
#   --smoke   a quick check that the benchmarks still work (CI runs it from
#             scripts/test-all.sh): a few crates of the corpus, 2 patterns x 1 run with the
#             equality check, 2 languages x 1 run of the corpora benchmark, 10 tools in
#             the compile benchmark, a 3,000-line file and 20 files x 1 run of the patch
#             benchmark, tiny divan samples, debug
#             builds. Its numbers mean nothing.
#   --only    run only these parts.
#   --runs N  timed runs per contestant and pattern, and per compile command (default 5);
#             cold builds: 3 per variant unless --runs is given (each takes 20 s to minutes).
#   --cold-build  also run step 5 (not part of a default run, nor of --smoke: ~10-20 min on
#             2 busy cores); `--only cold` runs it alone.
#
# Environment: XCSH_SHARED_DIR (default: the repository's ../shared) holds
# bench/corpus-rust; XCSH_CORPORA (default ~/.cache/xcsh-corpora) the fetched corpora;
# XCSH_BENCH_WORK (default: bench-work/ in the repository) is the scratch
# and cache directory. Full runs write bench/results/{cli,corpora,micro,compile}.json (and
# compile-cold.json with --cold-build) and latest.md;
# smoke runs write to the scratch directory only.
#
# Exit status: 0 when everything ran and both tools made identical edits; 1 when a part
# failed or the edits differ (named on stderr); 2 on bad usage or a missing input.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

smoke=0
only="cli,broad,corpora,warm,apply,edit,micro,compile,patch"
runs=5
runs_given=0
cold_build=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --smoke) smoke=1 ;;
        --only) only="$2"; shift ;;
        --only=*) only="${1#--only=}" ;;
        --runs) runs="$2"; runs_given=1; shift ;;
        --runs=*) runs="${1#--runs=}"; runs_given=1 ;;
        --cold-build) cold_build=1 ;;
        -h|--help) sed -n '2,58p' "$0"; exit 0 ;;
        *) echo "bench/run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done
only_given="$only"
(( cold_build )) && only+=",cold"
if (( smoke )) && [[ ",$only," == *",cold,"* ]]; then
    echo "bench/run.sh: the cold-build benchmark has no smoke mode (it takes minutes)" >&2
    exit 2
fi
wants() { [[ ",$only," == *",$1,"* ]]; }
step() { printf '\n==> %s\n' "$*" >&2; }

shared="${XCSH_SHARED_DIR:-$repo_root/../shared}"
if (( smoke )); then
    # CI runs the smoke from a clean clone that may have no shared/ beside it: a few crates of
    # the pinned corpus, pinned again in the repository, are enough to see the benchmark work.
    corpus_dir="$repo_root/bench/smoke-corpus"
else
    corpus_dir="$shared/bench/corpus-rust"
fi
manifest="$corpus_dir/Cargo.toml"
if [[ ! -f "$manifest" || ! -f "$corpus_dir/Cargo.lock" ]]; then
    echo "bench/run.sh: the pinned corpus is missing: expected $manifest and its Cargo.lock." >&2
    echo "It lives in the project's shared/ directory beside the repository; set" >&2
    echo "XCSH_SHARED_DIR=/path/to/shared if yours is elsewhere." >&2
    exit 2
fi
work="${XCSH_BENCH_WORK:-$repo_root/bench-work}"
target="${CARGO_TARGET_DIR:-$repo_root/target}"
mkdir -p "$work"
python="$repo_root/.venv/bin/python"
# No __pycache__ beside the scripts in the checkout.
export PYTHONDONTWRITEBYTECODE=1
ast_grep="$repo_root/.venv/bin/ast-grep"

if (( smoke )); then
    results="$work/results-smoke"
    profile_dir=debug
    build_flags=()
else
    results="$repo_root/bench/results"
    profile_dir=release
    build_flags=(--release)
fi
mkdir -p "$results"
failed=()

step "Python tools (the ast-grep CLI 0.51.1) in .venv"
scripts/bootstrap-python.sh >&2
version="$("$ast_grep" --version)"
if [[ "$version" != "ast-grep 0.51.1" ]]; then
    echo "bench/run.sh: expected ast-grep 0.51.1 in .venv, found '$version'" >&2
    exit 2
fi

if wants cli || wants broad || wants warm || wants apply || wants scale; then
    # The corpus: vendored once, reused while its lock file is unchanged.
    if (( smoke )); then corpus="$work/corpus-smoke"; else corpus="$work/corpus-rust"; fi
    stamp="$(cat "$manifest" "$corpus_dir/Cargo.lock" | sha256sum | cut -c1-16)"
    if [[ "$(cat "$corpus/.xcsh-bench-stamp" 2>/dev/null)" != "$stamp" ]]; then
        step "Laying out the pinned corpus in $corpus (cargo vendor)"
        rm -rf "$corpus" "$corpus.tmp"
        # --locked: the manifest's Cargo.lock fixes every version and is never written.
        if ! cargo vendor --locked --versioned-dirs --manifest-path "$manifest" "$corpus.tmp" \
                >/dev/null 2>"$work/vendor.log"; then
            cat "$work/vendor.log" >&2
            echo "bench/run.sh: cargo vendor failed (log above)" >&2
            exit 1
        fi
        echo "$stamp" > "$corpus.tmp/.xcsh-bench-stamp"
        mv "$corpus.tmp" "$corpus"
    fi

    step "Building xcsh and xcsh-plan-stats ($profile_dir)"
    # One at a time: together, cargo would unify their dependencies' features.
    cargo build "${build_flags[@]}" -p xcsh --bin xcsh
    cargo build "${build_flags[@]}" -p xcsh-bench --bin xcsh-plan-stats --bin xcsh-near-miss-bench \
        --bin xcsh-apply-bench
    # Timed from a private copy: another build in the same target dir cannot swap the binary
    # in the middle of the runs.
    bin="$work/bin-$profile_dir"
    mkdir -p "$bin"
    cp "$target/$profile_dir/xcsh" "$target/$profile_dir/xcsh-plan-stats" \
        "$target/$profile_dir/xcsh-near-miss-bench" "$target/$profile_dir/xcsh-apply-bench" "$bin/"
fi

if wants cli; then
    step "ast_edit preview vs ast-grep CLI"
    cli_args=(--xcsh "$bin/xcsh" --ast-grep "$ast_grep" --corpus "$corpus"
              --work "$work/cli" --out "$results/cli.json" --plan-stats "$bin/xcsh-plan-stats")
    if (( smoke )); then cli_args+=(--smoke --runs 1); else cli_args+=(--runs "$runs"); fi
    "$python" bench/cli_bench.py "${cli_args[@]}" || failed+=("cli (see above)")
fi

if wants broad; then
    step "Broad structural patterns: ast_edit preview vs ast-grep CLI (shape prefilter)"
    broad_args=(--set broad --xcsh "$bin/xcsh" --ast-grep "$ast_grep" --corpus "$corpus"
                --work "$work/broad" --out "$results/broad.json" --plan-stats "$bin/xcsh-plan-stats")
    if (( smoke )); then broad_args+=(--smoke --runs 1); else broad_args+=(--runs "$runs"); fi
    "$python" bench/cli_bench.py "${broad_args[@]}" || failed+=("broad (see above)")
fi

if wants warm; then
    step "Warm previews in one xcsh serve over MCP vs cold ones; near misses vs the search"
    # At the default budget (256 MiB, about a tenth of the corpus's trees), which every user
    # gets, no warm call may be slower than a cold one; then at a budget that holds the whole
    # corpus's trees (~2.5 GiB measured; see BENCHMARKS.md).
    warm_args=(--xcsh "$bin/xcsh" --corpus "$corpus" --work "$work/warm")
    if (( smoke )); then
        "$python" bench/warm_bench.py "${warm_args[@]}" --out "$results/warm.json" \
            --smoke --runs 1 --cache-mb 256 || failed+=("warm (see above)")
    else
        "$python" bench/warm_bench.py "${warm_args[@]}" --out "$results/warm.json" \
            --runs 3 --cache-mb 256 || failed+=("warm at the default budget (see above)")
        "$python" bench/warm_bench.py "${warm_args[@]}" --out "$results/warm-3072.json" \
            --runs 3 --cache-mb 3072 || failed+=("warm at 3072 MiB (see above)")
    fi
    near_runs=3
    (( smoke )) && near_runs=1
    "$bin/xcsh-near-miss-bench" --root "$corpus" --runs "$near_runs" \
        --out "$results/near_miss.json" || failed+=("near misses (see above)")
fi

if wants apply; then
    step "Preview plus apply vs ast-grep --update-all; a durable apply vs plain writes"
    apply_args=(--xcsh "$bin/xcsh" --apply-bench "$bin/xcsh-apply-bench" --ast-grep "$ast_grep"
                --corpus "$corpus" --work "$work/apply" --out "$results/apply.json")
    if (( smoke )); then apply_args+=(--smoke --runs 1); else apply_args+=(--runs "$runs"); fi
    "$python" bench/apply_bench.py "${apply_args[@]}" || failed+=("apply (see above)")
fi

if wants corpora; then
    step "Real-source corpora (scripts/fetch-corpora.sh: downloaded once, then only checked)"
    scripts/fetch-corpora.sh >&2 || { echo "bench/run.sh: the corpora could not be fetched" >&2; exit 2; }
    step "Building xcsh ($profile_dir)"
    cargo build "${build_flags[@]}" -p xcsh --bin xcsh
    bin="$work/bin-$profile_dir"
    mkdir -p "$bin"
    cp "$target/$profile_dir/xcsh" "$bin/"
    corpora_args=(--xcsh "$bin/xcsh" --ast-grep "$ast_grep" --work "$work/corpora"
                  --out "$results/corpora.json")
    if (( smoke )); then
        corpora_args+=(--smoke --runs 1)
    else
        # Files parsed, per language (untimed): xcsh-plan-stats with every grammar, which is
        # the xcsh binary's own xcsh-tools build. Not in --smoke: a build CI need not pay for.
        cargo build "${build_flags[@]}" -p xcsh-bench --bin xcsh-plan-stats \
            --features xcsh-tools/all-languages
        cp "$target/$profile_dir/xcsh-plan-stats" "$bin/xcsh-plan-stats-all-languages"
        corpora_args+=(--runs "$runs" --plan-stats "$bin/xcsh-plan-stats-all-languages")
    fi

    step "ast_edit preview vs ast-grep CLI on real sources, one pattern per language"
    "$python" bench/corpora_bench.py "${corpora_args[@]}" || failed+=("corpora (see above)")
fi

if wants scale; then
    step "Preview time and memory at 1x, 5x and 10x the corpus (hard-linked copies)"
    "$python" bench/scale_bench.py --xcsh "$bin/xcsh" --corpus "$corpus" --work "$work/scale" \
        --runs "$runs" --sizes 1,5,10 --out "$results/scale.json" || failed+=(scale)
fi

if wants edit; then
    step "edit vs read-replace-write; the syntax guard's share of a preview"
    cargo build "${build_flags[@]}" -p xcsh-bench --bin xcsh-edit-bench
    edit_args=()
    # The ast_edit share over the vendored corpus, when this run laid it out.
    [[ -n "${corpus:-}" && -d "${corpus:-}" ]] && edit_args+=(--root "$corpus")
    if (( smoke )); then
        "$target/$profile_dir/xcsh-edit-bench" --lines 2000 --runs 2 "${edit_args[@]}" \
            --out "$results/edit.json" || failed+=(edit)
    else
        "$target/$profile_dir/xcsh-edit-bench" --lines 20000 --runs "$(( runs * 2 + 1 ))" \
            "${edit_args[@]}" --out "$results/edit.json" || failed+=(edit)
    fi
fi

if wants micro; then
    step "Micro-benchmarks: Session::call vs rmcp, pending round trip, schema retrieval"
    if (( smoke )); then
        "$python" bench/micro_bench.py --repo "$repo_root" --rounds 1 --profile dev \
            --out "$results/micro.json" -- --sample-count 3 --sample-size 2 || failed+=(micro)
    else
        "$python" bench/micro_bench.py --repo "$repo_root" --rounds 3 \
            --out "$results/micro.json" || failed+=(micro)
    fi
fi

if wants compile; then
    step "Compile time: #[custom_tool] vs rmcp #[tool]"
    if (( smoke )); then
        # The checkout's own target dir: the test suite's debug build of xcsh is reused.
        "$python" bench/compile_bench.py --repo "$repo_root" --work "$work/compile-smoke" \
            --target-dir "$target" --tools 10 --runs 1 --quick \
            --out "$results/compile.json" || failed+=(compile)
    else
        "$python" bench/compile_bench.py --repo "$repo_root" --work "$work/compile" \
            --target-dir "$work/compile-target" --tools 200 --runs "$runs" \
            --out "$results/compile.json" || failed+=(compile)
    fi
fi

if wants patch; then
    step "apply_patch preview and apply vs GNU patch on the same change"
    if scripts/ensure-gnu-patch.sh; then
        cargo build "${build_flags[@]}" -p xcsh --bin xcsh
        bin="$work/bin-$profile_dir"
        mkdir -p "$bin"
        cp "$target/$profile_dir/xcsh" "$bin/xcsh-patch-bench"
        patch_args=(--xcsh "$bin/xcsh-patch-bench" --work "$work/patch" --out "$results/patch.json")
        if (( smoke )); then patch_args+=(--smoke --runs 1); else patch_args+=(--runs "$runs"); fi
        "$python" bench/patch_bench.py "${patch_args[@]}" || failed+=("patch (see above)")
    else
        failed+=("patch (GNU patch is missing; see above)")
    fi
fi

if wants cold; then
    step "Cold build of a 10-tool crate: xcsh[macros] vs xcsh[default] vs rmcp macros"
    # A fresh target dir before every build (removed afterwards); dependencies from the
    # local registry cache only (--offline).
    cold_runs=3
    (( runs_given )) && cold_runs="$runs"
    "$python" bench/compile_bench.py --cold --xcsh-features macros --repo "$repo_root" \
        --work "$work/compile-cold" --target-dir "$work/compile-cold-target" --tools 10 \
        --runs "$cold_runs" --out "$results/compile-cold.json" || failed+=(cold)
fi

step "Report"
command="bench/run.sh"
(( smoke )) && command+=" --smoke"
[[ "$only_given" != "cli,broad,corpora,warm,apply,edit,micro,compile,patch" ]] && command+=" --only $only_given"
(( cold_build )) && command+=" --cold-build"
"$python" bench/report.py --dir "$results" --command "$command" --out "$results/latest.md" >/dev/null
# The same results as SVG charts beside the JSON (BENCHMARKS.md shows them).
"$python" bench/charts.py --dir "$results" >&2 || failed+=(charts)
echo "Results: $results/latest.md" >&2

if (( ${#failed[@]} )); then
    echo "bench/run.sh: FAILED: ${failed[*]}" >&2
    exit 1
fi
