#!/usr/bin/env bash
# Every check CI runs, in the order a failure is cheapest to find: formatting, lints, the
# Rust test suite (unit, integration, doc, trybuild UI, the ast-grep CLI oracle on the
# fixtures and on real sources in fourteen more languages), then the interop tests against
# real clients this project did not write.
#
# Usage: scripts/test-all.sh        (from anywhere; sets up the Python venv itself)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

step() { printf '\n==> %s\n' "$*"; }

step "Python tools (ast-grep CLI oracle, MCP client, provider SDKs) in .venv"
scripts/bootstrap-python.sh

step "Real-source corpora for the per-language oracle (scripts/fetch-corpora.sh)"
# ~12 MB from npm, PyPI and Debian, pinned by version and sha256 (scripts/corpora.json);
# downloaded once, then only checked.
scripts/fetch-corpora.sh

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo doc -D warnings (intra-doc links resolve)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

step "cargo test --workspace"
# The oracle tests skip without the CLI on a plain `cargo test`; here they must run.
AST_GREP="$repo_root/.venv/bin/ast-grep" XCSH_REQUIRE_ORACLE=1 cargo test --workspace

step "MCP interop: the Python SDK (mcp 2.3.0) drives xcsh serve over stdio"
cargo build -p xcsh --bin xcsh
"$repo_root/.venv/bin/python" tests/interop/test_mcp_stdio.py \
    "${CARGO_TARGET_DIR:-$repo_root/target}/debug/xcsh"

step "MCP interop: the Python SDK over Streamable HTTP, server restarted under --state"
"$repo_root/.venv/bin/python" tests/interop/test_mcp_http.py \
    "${CARGO_TARGET_DIR:-$repo_root/target}/debug/xcsh"

step "MCP interop: the Python SDK with a bearer token, over HTTP and HTTPS (a CA made by the test)"
"$repo_root/.venv/bin/python" tests/interop/test_mcp_http_auth.py \
    "${CARGO_TARGET_DIR:-$repo_root/target}/debug/xcsh"

step "MCP interop: the SDK's Client in its default mode (protocol 2026-07-28) over stdio and HTTP: handles, approvals, bounded output"
"$repo_root/.venv/bin/python" tests/interop/test_mcp_current.py \
    "${CARGO_TARGET_DIR:-$repo_root/target}/debug/xcsh"

step "Provider SDKs: every message of xcsh session --dialect D is a valid request message (anthropic, openai, google-genai, botocore)"
cargo build -p xcsh --example provider_turns
"$repo_root/.venv/bin/python" tests/interop/test_provider_sdks.py \
    "${CARGO_TARGET_DIR:-$repo_root/target}/debug/xcsh" \
    "${CARGO_TARGET_DIR:-$repo_root/target}/debug/examples/provider_turns"

step "rig adapter (feature rig, off by default): clippy, its tests, and the example agent runs"
cargo clippy -p xcsh --features rig --all-targets -- -D warnings
cargo test -p xcsh --features rig --lib rig
cargo test -p xcsh --features rig --doc rig
cargo run -p xcsh --features rig --example rig_agent

step "Benchmarks still run (bench/run.sh --smoke: equality check included, numbers meaningless)"
bench/run.sh --smoke

if [[ -n "${XCSH_FUZZ_SECONDS:-}" ]]; then
    # Opt-in (needs cargo-fuzz and a nightly toolchain; see docs/RELIABILITY.md). Without it
    # the same entry points already ran on stable in `cargo test` (reliability_fuzz).
    step "Fuzz each target for ${XCSH_FUZZ_SECONDS}s (cargo +nightly fuzz)"
    for target in session_call pattern_compile changeset_ops; do
        mkdir -p "fuzz/corpus/$target"
        (cd fuzz && cargo +nightly fuzz run "$target" "corpus/$target" "regressions/$target" \
            -- -max_total_time="$XCSH_FUZZ_SECONDS")
    done
fi

echo
echo "All checks passed."
