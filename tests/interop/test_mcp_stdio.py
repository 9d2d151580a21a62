"""Interop: the official MCP Python SDK (`mcp` 2.3.0, a client this project did not write)
drives `xcsh serve` over stdio.

Two connections, one per protocol lifecycle the SDK speaks:

* `ClientSession.initialize()` (the 2025-11-25 handshake): tool listing, annotations and
  schemas, errors as `is_error` results, an `ast_edit` preview that leaves the file alone,
  `notifications/tools/list_changed`, the pending stack in `resolve`'s description, the apply
  through `resolve`, and progress notifications;
* the high-level `mcp.Client` (2026-07-28, no handshake): a preview seen through a
  `subscriptions/listen` stream, then discarded;
* `xcsh serve --approval human` with a `ClientSession` whose user answers elicitation
  requests (cancel, a malformed yes, accept, decline), and one without the capability;
* `xcsh serve --state DIR` restarted between an `ast_edit` preview and its `resolve`.

Plain Python and asyncio, no test runner needed:

    .venv/bin/python tests/interop/test_mcp_stdio.py [path/to/xcsh]

The binary defaults to $XCSH_BIN, then target/debug/xcsh. Exit status 0 when every check
passed; the last line is `N passed, M failed`.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import mcp.types as types
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.subscriptions import ToolsListChanged

import checks
from checks import REPO, check, text_of

SAMPLE = REPO / "examples" / "sample-workspace"
NOTHING_PENDING = "No pending action to resolve. Nothing to apply or discard."
UNWRAP_EDIT = {"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}
# Enough files for the ast tools' progress reports (one per 256 files scanned).
GENERATED_FILES = 600


def scratch_workspace() -> Path:
    """A copy of the bundled sample workspace, plus generated files for progress reports."""
    root = Path(tempfile.mkdtemp(prefix="xcsh-interop-"))
    shutil.copytree(SAMPLE, root, dirs_exist_ok=True)
    generated = root / "generated"
    generated.mkdir()
    for i in range(GENERATED_FILES):
        (generated / f"module_{i:03}.py").write_text(f"VALUE_{i} = {i}\n")
    return root


def server(binary: Path, root: Path) -> StdioServerParameters:
    env = dict(os.environ)
    env.setdefault("RUST_LOG", "warn")
    return StdioServerParameters(command=str(binary), args=["serve", "--root", str(root)], env=env)


async def handshake_session(binary: Path) -> None:
    root = scratch_workspace()
    config = root / "src" / "config.rs"
    original = config.read_text()
    notifications: list[Any] = []

    async def on_message(message: Any) -> None:
        notifications.append(message)

    try:
        async with stdio_client(server(binary, root)) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                init = await session.initialize()

                async def server_identity() -> None:
                    assert init.server_info.name == "xcsh", init.server_info
                    assert init.capabilities.tools is not None
                    assert init.capabilities.tools.list_changed is True, init.capabilities.tools

                await check("initialize: serverInfo and tools.listChanged", server_identity)

                async def listing() -> None:
                    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
                    assert list(tools) == ["ast_grep", "ast_edit", "apply_patch", "edit", "write_file", "undo", "resolve"], list(tools)
                    for tool in tools.values():
                        assert isinstance(tool.input_schema, dict), tool
                        assert tool.input_schema.get("type") == "object", tool.input_schema
                        assert tool.annotations is not None, tool
                    assert tools["ast_edit"].title == "AST Edit"
                    assert tools["ast_edit"].annotations.read_only_hint is True
                    assert tools["ast_grep"].annotations.read_only_hint is True
                    assert tools["resolve"].annotations.destructive_hint is True
                    assert tools["resolve"].annotations.read_only_hint is False
                    assert "ops" in tools["ast_edit"].input_schema["properties"]
                    resolve_schema = tools["resolve"].input_schema
                    assert resolve_schema["required"] == ["action", "reason"], resolve_schema
                    assert "Nothing is pending." in (tools["resolve"].description or "")

                await check("tools/list: names, titles, annotations, object schemas", listing)

                async def resolve_on_empty_stack() -> None:
                    result = await session.call_tool("resolve", {"action": "apply", "reason": "x"})
                    assert result.is_error is True, result
                    assert text_of(result) == NOTHING_PENDING, text_of(result)

                await check("resolve on an empty stack: exact is_error text", resolve_on_empty_stack)

                async def bad_arguments() -> None:
                    result = await session.call_tool("ast_edit", {"ops": [{"pat": 7, "out": "x"}]})
                    assert result.is_error is True, result
                    assert "ops[0].pat" in text_of(result), text_of(result)
                    assert "expected a string" in text_of(result), text_of(result)
                    missing = await session.call_tool("resolve", {"action": "apply"})
                    assert missing.is_error is True, missing
                    assert "reason" in text_of(missing), text_of(missing)
                    unknown = await session.call_tool("nope", {})
                    assert unknown.is_error is True, unknown
                    assert "Unknown tool `nope`" in text_of(unknown), text_of(unknown)

                await check("bad arguments and unknown tools: is_error results naming the field", bad_arguments)

                async def preview_changes_nothing() -> None:
                    notifications.clear()
                    result = await session.call_tool("ast_edit", UNWRAP_EDIT)
                    assert result.is_error is not True, text_of(result)
                    text = text_of(result)
                    assert "AST Edit preview: 4 replacements in 1 file" in text, text
                    assert "+    let text = fs::read_to_string(path)?;" in text, text
                    assert "<system-reminder>" in text_of(result), text
                    assert isinstance(result.structured_content, dict), result.structured_content
                    assert result.structured_content["totals"]["replacements"] == 4
                    assert config.read_text() == original, "the preview wrote the file"

                await check("ast_edit preview: diff and details, file unchanged", preview_changes_nothing)

                async def list_changed_and_stack() -> None:
                    for _ in range(50):
                        if any(isinstance(m, types.ToolListChangedNotification) for m in notifications):
                            break
                        await asyncio.sleep(0.05)
                    kinds = [type(m).__name__ for m in notifications]
                    assert "ToolListChangedNotification" in kinds, kinds
                    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
                    description = tools["resolve"].description or ""
                    assert "AST Edit: 4 replacements in 1 file (from ast_edit)" in description, description

                await check("tools/list_changed, then resolve lists the pending stack", list_changed_and_stack)

                async def apply_through_resolve() -> None:
                    result = await session.call_tool(
                        "resolve", {"action": "apply", "reason": "propagate errors"}
                    )
                    assert result.is_error is not True, text_of(result)
                    assert text_of(result) == "Applied 4 replacements in 1 file.", text_of(result)
                    details = result.structured_content
                    assert details["action"] == "apply" and details["sourceToolName"] == "ast_edit", details
                    now = config.read_text()
                    assert ".unwrap()" not in now, now
                    assert "let text = fs::read_to_string(path)?;" in now, now

                await check("resolve apply: the file on disk changed", apply_through_resolve)

                async def progress_notifications() -> None:
                    reports: list[tuple[float, float | None, str | None]] = []

                    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                        reports.append((progress, total, message))

                    result = await session.call_tool(
                        "ast_grep",
                        {"pat": "print($$$ARGS)", "lang": "python"},
                        progress_callback=on_progress,
                    )
                    assert result.is_error is not True, text_of(result)
                    assert reports, "no progress notification arrived"
                    values = [r[0] for r in reports]
                    assert values == sorted(values), values
                    assert "files scanned" in (reports[-1][2] or ""), reports

                await check("progress notifications for a request with a progress token", progress_notifications)
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def modern_client(binary: Path) -> None:
    root = scratch_workspace()
    config = root / "src" / "config.rs"
    original = config.read_text()
    try:
        async with Client(server(binary, root)) as client:

            async def list_and_error() -> None:
                tools = [tool.name for tool in (await client.list_tools()).tools]
                assert tools == ["ast_grep", "ast_edit", "apply_patch", "edit", "write_file", "undo", "resolve"], tools
                result = await client.call_tool("resolve", {"action": "discard", "reason": "x"})
                assert result.is_error is True and text_of(result) == NOTHING_PENDING, result

            await check("2026-07-28 client: tools/list and an is_error result", list_and_error)

            async def listen_preview_discard() -> None:
                async with client.listen(tools_list_changed=True) as subscription:
                    preview = await client.call_tool("ast_edit", UNWRAP_EDIT)
                    assert preview.is_error is not True, text_of(preview)
                    event = await asyncio.wait_for(subscription.__anext__(), timeout=5)
                    assert isinstance(event, ToolsListChanged), event
                    assert subscription.honored.tools_list_changed is True, subscription.honored
                tools = {tool.name: tool for tool in (await client.list_tools()).tools}
                assert "AST Edit: 4 replacements" in (tools["resolve"].description or "")
                discarded = await client.call_tool("resolve", {"action": "discard", "reason": "not now"})
                assert discarded.is_error is not True, text_of(discarded)
                assert text_of(discarded).startswith("Discarded: AST Edit: 4 replacements in 1 file."), text_of(
                    discarded
                )
                assert config.read_text() == original, "a discarded preview wrote the file"

            await check("2026-07-28 client: list_changed through subscriptions/listen, discard", listen_preview_discard)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def human_server(binary: Path, root: Path) -> StdioServerParameters:
    params = server(binary, root)
    params.args = [*params.args, "--approval", "human"]
    return params


async def elicitation_approvals(binary: Path) -> None:
    """`xcsh serve --approval human`: the client's user decides through elicitation."""
    root = scratch_workspace()
    config = root / "src" / "config.rs"
    original = config.read_text()
    answers: list[types.ElicitResult] = []
    asked: list[types.ElicitRequestParams] = []

    async def user(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return answers.pop(0)

    apply = {"action": "apply", "reason": "safer error handling"}
    try:
        async with stdio_client(human_server(binary, root)) as (read, write):
            async with ClientSession(read, write, elicitation_callback=user) as session:
                await session.initialize()

                async def preview() -> str:
                    result = await session.call_tool("ast_edit", UNWRAP_EDIT)
                    assert result.is_error is not True, text_of(result)
                    return text_of(result)

                async def cancel_keeps_it_pending() -> None:
                    await preview()
                    answers.append(types.ElicitResult(action="cancel"))
                    result = await session.call_tool("resolve", apply)
                    assert result.is_error is True, result
                    assert "the person gave no answer" in text_of(result), text_of(result)
                    assert config.read_text() == original
                    message = asked[-1].message
                    assert "AST Edit:" in message and "Reason: safer error handling" in message, message
                    schema = asked[-1].requested_schema
                    # The decision is the elicitation's action; the form only asks for words.
                    assert not schema.get("required"), schema
                    assert list(schema["properties"]) == ["comment"], schema
                    tools = await session.list_tools()
                    resolve = next(t for t in tools.tools if t.name == "resolve")
                    assert "AST Edit:" in (resolve.description or ""), resolve.description

                await check("elicitation: cancel leaves the action on top, nothing written", cancel_keeps_it_pending)

                async def accept_writes_the_preview() -> None:
                    # A host that accepts with an empty form: Accept is yes.
                    answers.append(types.ElicitResult(action="accept", content={}))
                    result = await session.call_tool("resolve", apply)
                    assert result.is_error is not True, text_of(result)
                    assert text_of(result).startswith("Applied "), text_of(result)
                    now = config.read_text()
                    assert now != original and ".unwrap()" not in now, now

                await check("elicitation: accept writes the previewed bytes", accept_writes_the_preview)

                async def decline_discards() -> None:
                    config.write_text(original)
                    await preview()
                    answers.append(types.ElicitResult(action="decline"))
                    result = await session.call_tool("resolve", apply)
                    assert result.is_error is True, result
                    assert "The person declined to apply" in text_of(result), text_of(result)
                    assert config.read_text() == original
                    nothing = await session.call_tool("resolve", {"action": "discard", "reason": "check"})
                    assert text_of(nothing) == NOTHING_PENDING, text_of(nothing)

                await check("elicitation: decline writes nothing and tells the model", decline_discards)

        config.write_text(original)
        async with stdio_client(human_server(binary, root)) as (read, write):
            async with ClientSession(read, write) as session:  # no elicitation capability
                await session.initialize()

                async def refused_without_capability() -> None:
                    await session.call_tool("ast_edit", UNWRAP_EDIT)
                    result = await session.call_tool("resolve", apply)
                    assert result.is_error is True, result
                    text = text_of(result)
                    assert "did not declare the elicitation capability" in text, text
                    assert "discard" in text, text
                    assert config.read_text() == original

                await check("elicitation: a client without the capability gets a refusal", refused_without_capability)
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def restart_with_state(binary: Path) -> None:
    """`xcsh serve --state DIR` restarted between the preview and the resolve."""
    root = scratch_workspace()
    state = Path(tempfile.mkdtemp(prefix="xcsh-state-"))
    config = root / "src" / "config.rs"
    original = config.read_text()

    def with_state() -> StdioServerParameters:
        params = server(binary, root)
        params.args = [*params.args, "--state", str(state)]
        return params

    try:
        async with stdio_client(with_state()) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                preview = await session.call_tool("ast_edit", UNWRAP_EDIT)
                assert preview.is_error is not True, text_of(preview)
        assert config.read_text() == original

        async with stdio_client(with_state()) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()

                async def resolved_after_restart() -> None:
                    tools = await session.list_tools()
                    resolve = next(t for t in tools.tools if t.name == "resolve")
                    assert "AST Edit:" in (resolve.description or ""), resolve.description
                    result = await session.call_tool("resolve", {"action": "apply", "reason": "after restart"})
                    assert result.is_error is not True, text_of(result)
                    assert text_of(result).startswith("Applied "), text_of(result)
                    assert ".unwrap()" not in config.read_text()

                await check("serve --state: a preview survives a restart and applies", resolved_after_restart)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)


async def main() -> int:
    binary = checks.binary()
    if binary is None:
        return 2
    await handshake_session(binary)
    await modern_client(binary)
    await elicitation_approvals(binary)
    await restart_with_state(binary)
    return checks.tally()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
