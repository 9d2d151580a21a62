"""What every interop script here shares: checks that report and carry on, the binary under
test, and the closing tally (`N passed, M failed`, exit status 1 on any failure)."""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import Awaitable, Callable

import mcp.types as types

REPO = Path(__file__).resolve().parents[2]

passed: list[str] = []
failed: list[str] = []


async def check(name: str, body: Callable[[], Awaitable[None]]) -> None:
    """Runs one check; a failure is recorded and reported, and the next check still runs."""
    try:
        await body()
    except Exception:  # noqa: BLE001 - every failure is reported the same way
        failed.append(name)
        print(f"FAIL {name}\n{traceback.format_exc()}", flush=True)
    else:
        passed.append(name)
        print(f"ok   {name}", flush=True)


def text_of(result: types.CallToolResult) -> str:
    """The text blocks of a tool result, one per line."""
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def binary() -> Path | None:
    """The `xcsh` binary: the first argument, else $XCSH_BIN, else target/debug/xcsh. None (after
    saying what to do) when there is no such file."""
    default = os.environ.get("XCSH_BIN") or str(REPO / "target" / "debug" / "xcsh")
    path = Path(sys.argv[1] if len(sys.argv) > 1 else default)
    if not path.is_file():
        print(f"no xcsh binary at {path}; build it with `cargo build -p xcsh` or pass its path", file=sys.stderr)
        return None
    return path


def tally() -> int:
    """Prints `N passed, M failed`; the exit status."""
    print(f"{len(passed)} passed, {len(failed)} failed")
    return 1 if failed else 0
