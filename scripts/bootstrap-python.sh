#!/usr/bin/env bash
# Idempotently create the repository's Python virtualenv (.venv at the repo root) and
# install the Python-side tools that tests use as oracles. Safe to run repeatedly: pip
# skips packages that are already at the pinned version.
#
# Usage: scripts/bootstrap-python.sh
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo_root/.venv"

# One requirement per line; keep versions pinned so oracles are reproducible.
packages=(
    # The ast-grep CLI at the same engine version as the workspace's ast-grep-core; used by
    # xcsh-tools/tests/oracle.rs as the reference for rewrites.
    "ast-grep-cli==0.51.1"
    # The official MCP Python SDK: a client this project did not write, used by
    # tests/interop/test_mcp_stdio.py against `xcsh serve`.
    "mcp==2.3.0"
    # Makes the CA and server certificate tests/interop/test_mcp_http_auth.py serves HTTPS
    # with (mcp already brings it, as `pyjwt[crypto]`; pinned here because a test imports it).
    "cryptography==50.0.2"
    # The providers' own SDKs: tests/interop/test_provider_sdks.py validates every message
    # `xcsh session --dialect D` returns against their request types (pydantic comes with
    # them; botocore carries the bedrock-runtime service model and its validator).
    "anthropic==2.15.0"
    "openai==3.57.0"
    "google-genai==3.6.1"
    "botocore==1.44.8"
)

if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi

"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${packages[@]}"

echo "Python tools installed in $venv"
