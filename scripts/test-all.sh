#!/usr/bin/env bash
# Every check CI runs, in the order a failure is cheapest to find: formatting, lints, the
# Rust test suite (unit, integration, doc, trybuild UI, the ast-grep CLI oracle), then the
# interop tests against real clients this project did not write.
#
# Usage: scripts/test-all.sh        (from anywhere; sets up the Python venv itself)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

step() { printf '\n==> %s\n' "$*"; }

step "Python tools (ast-grep CLI oracle, MCP client) in .venv"
scripts/bootstrap-python.sh

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo doc -D warnings (intra-doc links resolve)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

step "cargo test --workspace"
AST_GREP="$repo_root/.venv/bin/ast-grep" cargo test --workspace

step "MCP interop: the Python SDK (mcp 2.3.0) drives xcsh serve over stdio"
cargo build -p xcsh --bin xcsh
"$repo_root/.venv/bin/python" tests/interop/test_mcp_stdio.py \
    "${CARGO_TARGET_DIR:-$repo_root/target}/debug/xcsh"

step "Benchmarks still run (bench/run.sh --smoke: equality check included, numbers meaningless)"
bench/run.sh --smoke

echo
echo "All checks passed."
