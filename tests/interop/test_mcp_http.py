"""Interop: the official MCP Python SDK (`mcp` 2.3.0) drives `xcsh serve --http ADDR --state DIR`
over Streamable HTTP, and the server is killed (SIGKILL) between a preview and its `resolve`:

* the SDK's own session carries on across the restart (same `ClientSession`, same
  `Mcp-Session-Id`, no new `initialize`): its `resolve` applies what it previewed;
* a new client that presents the old session id (an `httpx2.AsyncClient` with an
  `mcp-session-id` header, no `initialize`) resolves it too;
* a session id the server never issued is an error for the SDK, and leaves no file in DIR;
* a session that ends (the SDK's DELETE on close) with nothing pending leaves no file.

Plain Python and asyncio, no test runner needed:

    .venv/bin/python tests/interop/test_mcp_http.py [path/to/xcsh]

The binary defaults to $XCSH_BIN, then target/debug/xcsh. Exit status 0 when every check
passed; the last line is `N passed, M failed`.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp import MCPError

import checks
from checks import check, text_of

OLD = "fn load() -> R {\n    let v = read().unwrap();\n    Ok(v)\n}\n"
NEW = "fn load() -> R {\n    let v = read()?;\n    Ok(v)\n}\n"
EDIT = {"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}
FORGED = "0b8c1e2f-5d6a-4c3b-9e8f-7a6b5c4d3e2f"


class Server:
    """`xcsh serve --http ADDR --state STATE --root ROOT`; ADDR `127.0.0.1:0` picks a port."""

    def __init__(self, binary: Path, root: Path, state: Path, addr: str = "127.0.0.1:0") -> None:
        env = dict(os.environ)
        env.setdefault("RUST_LOG", "warn")
        self.process = subprocess.Popen(
            [str(binary), "serve", "--http", addr, "--root", str(root), "--state", str(state)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        assert "http://" in line, line
        self.addr = line.split("http://")[1].split("/")[0]
        self.url = f"http://{self.addr}/mcp"

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()


def workspace() -> Path:
    root = Path(tempfile.mkdtemp(prefix="xcsh-interop-http-"))
    (root / "src").mkdir()
    (root / "src" / "load.rs").write_text(OLD)
    return root


def session_files(state: Path) -> list[str]:
    return sorted(path.name for path in state.iterdir())


async def wait_for(condition: Callable[[], bool]) -> bool:
    for _ in range(100):
        if condition():
            return True
        await asyncio.sleep(0.05)
    return condition()


async def restarts(binary: Path) -> None:
    root = workspace()
    state = Path(tempfile.mkdtemp(prefix="xcsh-state-"))
    target = root / "src" / "load.rs"
    server = Server(binary, root, state)
    try:
        async with streamable_http_client(server.url, terminate_on_close=False) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()

                async def same_session_after_restart() -> None:
                    nonlocal server
                    preview = await session.call_tool("ast_edit", EDIT)
                    assert preview.is_error is not True, text_of(preview)
                    assert "+    let v = read()?;" in text_of(preview), text_of(preview)
                    server.kill()
                    assert target.read_text() == OLD
                    server = Server(binary, root, state, server.addr)
                    tools = await session.list_tools()
                    resolve = next(t for t in tools.tools if t.name == "resolve")
                    assert "AST Edit: 1 replacement in 1 file" in (resolve.description or ""), resolve.description
                    result = await session.call_tool("resolve", {"action": "apply", "reason": "after restart"})
                    assert result.is_error is not True, text_of(result)
                    assert text_of(result) == "Applied 1 replacement in 1 file.", text_of(result)
                    assert target.read_text() == NEW, target.read_text()

                await check("serve --http --state: the SDK's session survives a restart and applies", same_session_after_restart)

                # The next preview, left for another client to resolve after the next restart.
                target.write_text(OLD)
                preview = await session.call_tool("ast_edit", EDIT)
                assert preview.is_error is not True, text_of(preview)
                session_id = next(name for name in session_files(state) if name.endswith(".session"))[: -len(".session")]

        server.kill()
        server = Server(binary, root, state, server.addr)

        async def new_client_with_the_old_id() -> None:
            headers = {"mcp-session-id": session_id}
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                async with streamable_http_client(server.url, http_client=http, terminate_on_close=False) as (read, write):
                    async with ClientSession(read, write) as session:
                        result = await session.call_tool("resolve", {"action": "apply", "reason": "another client"})
                        assert result.is_error is not True, text_of(result)
                        assert text_of(result) == "Applied 1 replacement in 1 file.", text_of(result)
                        assert target.read_text() == NEW, target.read_text()

        await check("serve --http --state: a new client presenting the old session id resolves", new_client_with_the_old_id)

        async def forged_id() -> None:
            before = session_files(state)
            async with httpx2.AsyncClient(headers={"mcp-session-id": FORGED}, timeout=30) as http:
                async with streamable_http_client(server.url, http_client=http, terminate_on_close=False) as (read, write):
                    async with ClientSession(read, write) as session:
                        try:
                            result = await session.call_tool("resolve", {"action": "apply", "reason": "forged"})
                        except MCPError as error:
                            assert "Session terminated" in str(error) or "Not Found" in str(error), error
                        else:
                            raise AssertionError(f"a forged session id was served: {text_of(result)}")
            assert session_files(state) == before, (before, session_files(state))

        await check("serve --http --state: a session id never issued is an error and creates no file", forged_id)

        async def closed_session_leaves_nothing() -> None:
            before = session_files(state)
            async with streamable_http_client(server.url) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    assert len(session_files(state)) == len(before) + 3, session_files(state)
                    result = await session.call_tool("resolve", {"action": "apply", "reason": "nothing"})
                    assert "No pending action" in text_of(result), text_of(result)
            # The SDK sends DELETE on close: the record and the empty stack go.
            assert await wait_for(lambda: session_files(state) == before), (before, session_files(state))

        await check("serve --http --state: a session closed with nothing pending leaves no file", closed_session_leaves_nothing)
    finally:
        server.kill()
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)


async def main() -> int:
    binary = checks.binary()
    if binary is None:
        return 2
    await restarts(binary)
    return checks.tally()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
