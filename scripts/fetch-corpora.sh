#!/usr/bin/env bash
# Downloads the pinned real-source corpora (scripts/corpora.json: npm, PyPI and Debian
# packages, each checked by sha256) into $XCSH_CORPORA (default ~/.cache/xcsh-corpora), for
# the per-language oracle (xcsh-tools/tests/oracle_corpora.rs) and bench/corpora_bench.py.
# Idempotent: what is already there and verified is not downloaded again.
#
# Usage: scripts/fetch-corpora.sh [--dir DIR] [--only NAME,...] [--stats]
set -euo pipefail
exec python3 "$(dirname "${BASH_SOURCE[0]}")/fetch_corpora.py" "$@"
