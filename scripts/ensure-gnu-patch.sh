#!/usr/bin/env bash
# GNU patch is the reference of the apply_patch benchmark (bench/patch_bench.py). Uses the
# one on PATH; else installs Debian's `patch` package with apt-get when it can (as root, or
# through a sudo that needs no password); else says how and fails.
#
# Usage: scripts/ensure-gnu-patch.sh        Exit status: 0 when `patch` is GNU patch, 2 if not.
set -euo pipefail

if command -v patch >/dev/null 2>&1 && patch --version 2>/dev/null | head -1 | grep -q "GNU patch"; then
    exit 0
fi
if command -v apt-get >/dev/null 2>&1; then
    as_root=()
    if [[ "$(id -u)" != 0 ]]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            as_root=(sudo -n)
        else
            echo "ensure-gnu-patch.sh: GNU patch is missing and apt-get needs root: run 'apt-get install -y patch' as root" >&2
            exit 2
        fi
    fi
    echo "ensure-gnu-patch.sh: installing GNU patch (apt-get install -y patch)" >&2
    "${as_root[@]}" apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends patch >&2
    command -v patch >/dev/null 2>&1 && exit 0
fi
echo "ensure-gnu-patch.sh: GNU patch is not installed and cannot be installed here: install the 'patch' package" >&2
exit 2
