"""Interop: the official MCP Python SDK (`mcp` 2.3.0) used the way its docs show it, with the
high-level `mcp.Client` in its default mode (`auto`: it probes `server/discover` and then
speaks protocol 2026-07-28), against `xcsh serve` over stdio
(`Client(StdioServerParameters(...))`, one process is one conversation) and over Streamable
HTTP (`Client("http://.../mcp")`, no protocol session: pending stacks are named by handles).

Over stdio and over HTTP (where it applies), every check asserting on the files on disk:

* the client negotiates 2026-07-28; every built-in tool declares an `outputSchema`, and over
  HTTP the tools that push (and `resolve`) take a `handle` argument;
* an `ast_edit` preview writes nothing, and `resolve` apply in a later call writes it; over
  HTTP the preview names a handle `ph-` + 40 hex (in its text and `structuredContent`) and
  `resolve` takes it; over stdio no handle is shown or needed; the structured content of both
  validates against the declared schemas (checked here with `jsonschema` too);
* the preview is a resource (a `resource_link` in the result): `resources/read` gives the
  unified diff, and `<preview>/after/<file>` the exact bytes apply then writes (a CRLF file
  with non-ASCII text under a path with a space and an accent); the resource goes once
  resolved; the `after/` part is not labelled as a diff;
* two previews on one stack resolve last-in, first-out;
* forged or unknown handles are refused (`Unknown handle`) and apply nothing, and the real
  preview is still pending afterwards; over HTTP `resolve` without a handle is refused
  naming `handle`, and an `ast_edit` joining a forged handle pushes nothing;
* a second client cannot apply the first client's preview;
* `undo` previews the revert of an apply, and `resolve` applies it;
* over stdio, `subscriptions/listen` (`client.listen(tools_list_changed=True)`) tells of each
  change of the stack, and `resolve`'s listed description follows it;
* with `--approval human` and an `elicitation_callback`, the SDK answers the input-required
  round itself: accept applies after exactly one question (its form names the label and the
  reason, and asks only for an optional comment); decline writes nothing and drops the
  action; cancel writes nothing and keeps it pending; without the callback the client
  declares no elicitation capability and nothing is written;
* driving the round by hand (`client.session.call_tool(..., allow_input_required=True)`):
  a retry without an answer is no decision; an altered request state, a replayed one, one
  answering for an action no longer on top, and one from another conversation are refused,
  writing nothing;
* on the widest preview (3,000 files with long non-ASCII paths, 15,000 replacements) the
  structured content of `ast_edit`, `ast_grep` and `resolve` stays within 64 KiB and valid,
  while the preview resource has every file; `resolve`'s refusals stay within it too; over
  HTTP, the answer to a preview of 3,000 files with long paths reaches the SDK (whose
  Streamable HTTP client takes server-sent events of at most 1 MiB);
* progress reports reach `progress_callback` during an `ast_grep` over 3,000 files;
  cancelling a long `ast_edit` (the asyncio task, after its first progress report) stops it:
  the conversation answers the next call at once, and the cancelled call pushes no preview.

Over HTTP only, with `--state DIR`: the server SIGKILLed between preview and `resolve` and
restarted (on the same address, or another port) still applies with the handle; without
`--state` the handle is then unknown and nothing is applied; an approval question asked
before a restart is answered after it, and a request state used before a restart is not
accepted again after it.

Plain Python and asyncio, no test runner needed:

    .venv/bin/python tests/interop/test_mcp_current.py [path/to/xcsh]

The binary defaults to $XCSH_BIN, then target/debug/xcsh. Exit status 0 when every check
passed; the last line is `N passed, M failed`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator
from urllib.parse import quote

import jsonschema
import mcp.types as types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.subscriptions import ToolsListChanged

import checks
from checks import check, text_of

PROTOCOL = "2026-07-28"
HANDLE = re.compile(r"^ph-[0-9a-f]{40}$")
FORGED = ["ph-" + "0" * 40, "ph-" + "a1" * 20, "not-a-handle"]
MAX_STRUCTURED = 64 * 1024

EDIT = {"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}
# A second edit on the same files, for two previews on one stack.
RENAME = {"ops": [{"pat": "Ok($V)", "out": "Ok(Some($V))"}], "lang": "rust"}

LOAD = "src/load.rs"
LOAD_OLD = "fn load() -> R {\n    let v = read().unwrap();\n    Ok(v)\n}\n"
LOAD_NEW = "fn load() -> R {\n    let v = read()?;\n    Ok(v)\n}\n"
LOAD_RENAMED = "fn load() -> R {\n    let v = read().unwrap();\n    Ok(Some(v))\n}\n"
# CRLF line ends and non-ASCII text, under a path with a space and an accent: the `after/`
# part must be these bytes exactly.
CRLF = "src/dir é/größe.rs"
CRLF_OLD = 'fn größe() -> R {\r\n    let v = lire("é").unwrap();\r\n    Ok(v)\r\n}\r\n'.encode()
CRLF_NEW = 'fn größe() -> R {\r\n    let v = lire("é")?;\r\n    Ok(v)\r\n}\r\n'.encode()

WIDE_FILES = 3000
WIDE_PER_FILE = 5


def wire_size(value: Any) -> int:
    """Bytes of `value` as compact UTF-8 JSON, as the server sends it."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


# --- Workspaces ---------------------------------------------------------------------------


def small_workspace() -> Path:
    root = Path(tempfile.mkdtemp(prefix="xcsh-interop-current-"))
    reset(root)
    return root


def reset(root: Path) -> None:
    (root / LOAD).parent.mkdir(parents=True, exist_ok=True)
    (root / LOAD).write_text(LOAD_OLD)
    (root / CRLF).parent.mkdir(parents=True, exist_ok=True)
    (root / CRLF).write_bytes(CRLF_OLD)


def unchanged(root: Path) -> None:
    assert (root / LOAD).read_text() == LOAD_OLD, (root / LOAD).read_text()
    assert (root / CRLF).read_bytes() == CRLF_OLD, (root / CRLF).read_bytes()


def applied(root: Path) -> None:
    assert (root / LOAD).read_text() == LOAD_NEW, (root / LOAD).read_text()
    assert (root / CRLF).read_bytes() == CRLF_NEW, (root / CRLF).read_bytes()


def wide_file(index: int) -> str:
    lines = [f"fn f{index}() -> R {{"]
    lines += [f"    let v{k} = lire_{index}_{k}(\"é\").unwrap();" for k in range(WIDE_PER_FILE)]
    lines += [f"    marker_{index}();", "    Ok(v0)", "}", ""]
    return "\n".join(lines)


def wide_workspace() -> Path:
    """3,000 files in 30 directories with long non-ASCII names: the widest preview."""
    root = Path(tempfile.mkdtemp(prefix="xcsh-interop-wide-"))
    for index in range(WIDE_FILES):
        directory = root / "src" / (f"module_numéro_{index % 30:02d}_" + "très_long_répertoire_" * 4)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"fichier_généré_{index:05d}_avec_un_nom_assez_long.rs").write_text(wide_file(index))
    return root


def deep_workspace() -> Path:
    """3,000 files, one replacement each, under paths of about 450 bytes."""
    root = Path(tempfile.mkdtemp(prefix="xcsh-interop-deep-"))
    for index in range(WIDE_FILES):
        levels = [f"niveau_profond_numéro_{level}_{index % 10}_" + "x" * 40 for level in range(6)]
        directory = root.joinpath("src", *levels)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"fichier_{index:05d}.rs").write_text(LOAD_OLD)
    return root


def wide_unchanged(root: Path) -> None:
    changed = [p for p in sorted(root.rglob("*.rs")) if ".unwrap()" not in p.read_text()]
    assert not changed, f"{len(changed)} files were written, e.g. {changed[:2]}"


# --- Servers ------------------------------------------------------------------------------


class Http:
    """`xcsh serve --http ADDR --root ROOT [extra...]`; ADDR `127.0.0.1:0` picks a port."""

    def __init__(self, binary: Path, root: Path, *extra: str, addr: str = "127.0.0.1:0") -> None:
        env = dict(os.environ)
        env.setdefault("RUST_LOG", "warn")
        self.process = subprocess.Popen(
            [str(binary), "serve", "--http", addr, "--root", str(root), *extra],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        assert self.process.stderr is not None
        # `--approval human` prints a notice first: read until the address.
        line = ""
        for _ in range(10):
            line = self.process.stderr.readline()
            if "http://" in line or not line:
                break
        assert "http://" in line, line
        self.addr = line.split("http://")[1].split("/")[0]
        self.url = f"http://{self.addr}/mcp"
        # Keep reading its log, so that a full pipe never stalls the server.
        threading.Thread(target=self.process.stderr.read, daemon=True).start()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()


class Target:
    """One way to reach `xcsh serve`: `client()` opens a new conversation.

    Over stdio each conversation is a new server process (the SDK starts it); over HTTP every
    client talks to one server, and the stack is named by the handle a preview gives.
    """

    def __init__(self, binary: Path, root: Path, http: bool, *extra: str) -> None:
        self.binary = binary
        self.root = root
        self.http = http
        self.extra = list(extra)
        self.name = "http" if http else "stdio"
        self.server = Http(binary, root, *extra) if http else None

    def client(self, **options: Any) -> Client:
        if self.server is not None:
            return Client(self.server.url, **options)
        args = ["serve", "--root", str(self.root), *self.extra]
        return Client(StdioServerParameters(command=str(self.binary), args=args), **options)

    def close(self) -> None:
        if self.server is not None:
            self.server.kill()


@asynccontextmanager
async def targets(binary: Path, root: Path, *extra: str) -> AsyncIterator[list[Target]]:
    both = [Target(binary, root, False, *extra), Target(binary, root, True, *extra)]
    try:
        yield both
    finally:
        for target in both:
            target.close()


def with_handle(args: dict[str, Any], handle: str | None) -> dict[str, Any]:
    return {**args, "handle": handle} if handle is not None else dict(args)


async def schemas(client: Client) -> dict[str, types.Tool]:
    return {tool.name: tool for tool in (await client.list_tools()).tools}


def valid(tools: dict[str, types.Tool], name: str, result: types.CallToolResult) -> None:
    """`result`'s structured content against `name`'s declared schema, checked here too."""
    schema = tools[name].output_schema
    assert schema is not None, f"{name} declares no outputSchema"
    assert result.structured_content is not None, f"{name} gave no structuredContent"
    jsonschema.validate(result.structured_content, schema, cls=jsonschema.Draft202012Validator)


async def preview(
    target: Target, client: Client, edit: dict[str, Any] = EDIT, handle: str | None = None
) -> tuple[types.CallToolResult, str | None]:
    """An `ast_edit` preview; returns it and the handle naming its stack (None on stdio)."""
    result = await client.call_tool("ast_edit", with_handle(edit, handle))
    assert result.is_error is not True, text_of(result)
    structured = result.structured_content or {}
    assert structured.get("status") == "preview", structured
    if not target.http:
        assert "handle" not in structured, structured
        assert "Pending-action handle" not in text_of(result), text_of(result)
        return result, None
    named = structured.get("handle")
    assert isinstance(named, str) and HANDLE.match(named), f"no handle `ph-` + 40 hex: {named!r}"
    assert f"Pending-action handle: `{named}`" in text_of(result), text_of(result)
    if handle is not None:
        assert named == handle, (named, handle)
    return result, named


async def resolve(
    client: Client, action: str, handle: str | None, reason: str = "interop", **options: Any
) -> types.CallToolResult:
    return await client.call_tool("resolve", with_handle({"action": action, "reason": reason}, handle), **options)


async def expect_pending(client: Client, handle: str | None, label: str, remaining: int = 0) -> None:
    """The top pending action is `label`: discards it to see (so it writes nothing)."""
    result = await resolve(client, "discard", handle, "checking it is still pending")
    assert result.is_error is not True, f"the action is no longer pending: {text_of(result)}"
    structured = result.structured_content or {}
    assert structured.get("outcome") == "discarded", structured
    assert structured.get("label") == label, (structured.get("label"), label)
    assert structured.get("remaining") == remaining, structured


async def expect_empty(client: Client, handle: str | None) -> None:
    result = await resolve(client, "discard", handle, "checking nothing is pending")
    assert result.is_error is True, f"something was still pending: {text_of(result)}"
    assert text_of(result).startswith("No pending action to resolve."), text_of(result)


# --- The core flow ------------------------------------------------------------------------


async def core(binary: Path) -> None:
    root = small_workspace()
    async with targets(binary, root) as both:
        for t in both:

            async def listing(t: Target = t) -> None:
                async with t.client() as client:
                    assert client.protocol_version == PROTOCOL, client.protocol_version
                    tools = await schemas(client)
                    assert list(tools)[:7] == ["ast_grep", "ast_edit", "apply_patch", "edit", "write_file", "undo", "resolve"], list(tools)
                    for name in ("ast_grep", "ast_edit", "apply_patch", "edit", "write_file", "undo", "resolve"):
                        schema = tools[name].output_schema
                        assert isinstance(schema, dict) and schema.get("type") == "object", (name, schema)
                        jsonschema.Draft202012Validator.check_schema(schema)
                    # Over HTTP the tools that push, and `resolve`, take the handle; over stdio
                    # the tools that push do not (the process is the conversation).
                    for name in ("ast_edit", "apply_patch", "edit", "write_file", "undo", "resolve") if t.http else ("ast_edit", "apply_patch", "edit", "write_file", "undo"):
                        takes = "handle" in tools[name].input_schema.get("properties", {})
                        assert takes == t.http, (name, tools[name].input_schema)

            await check(f"{t.name}: the client speaks {PROTOCOL}; every tool declares an outputSchema", listing)

            async def preview_then_apply(t: Target = t) -> None:
                reset(root)
                async with t.client() as client:
                    tools = await schemas(client)
                    shown, handle = await preview(t, client)
                    valid(tools, "ast_edit", shown)
                    structured = shown.structured_content or {}
                    assert structured["totals"]["filesChanged"] == 2, structured
                    assert structured["totals"]["replacements"] == 2, structured
                    assert sorted(f["file"] for f in structured["files"]) == sorted([LOAD, CRLF]), structured
                    assert structured["filesOmitted"] == 0, structured
                    assert str(structured.get("effectDigest", "")).startswith("sha256:"), structured
                    unchanged(root)

                    result = await resolve(client, "apply", handle)
                    assert result.is_error is not True, text_of(result)
                    assert text_of(result).startswith("Applied 2 replacements in 2 files."), text_of(result)
                    valid(tools, "resolve", result)
                    done = result.structured_content or {}
                    assert done["action"] == "apply" and done["outcome"] == "applied", done
                    assert done["pendingId"] == structured["pendingId"], (done, structured)
                    assert done["label"] == structured["summary"], (done, structured)
                    assert done["sourceToolName"] == "ast_edit" and done["remaining"] == 0, done
                    applied(root)
                    await expect_empty(client, handle)

            await check(
                f"{t.name}: a preview writes nothing; resolve apply in a later call writes it", preview_then_apply
            )

            async def resource(t: Target = t) -> None:
                reset(root)
                async with t.client() as client:
                    shown, handle = await preview(t, client)
                    structured = shown.structured_content or {}
                    links = [block for block in shown.content if isinstance(block, types.ResourceLink)]
                    assert len(links) == 1, shown.content
                    uri = str(links[0].uri)
                    assert uri == structured["preview"], (uri, structured["preview"])
                    whole = (await client.read_resource(uri)).contents
                    assert len(whole) == 1 and isinstance(whole[0], types.TextResourceContents), whole
                    diff = whole[0].text
                    assert "-    let v = read().unwrap();\n+    let v = read()?;\n" in diff, diff
                    assert diff.count("diff --git ") == 2, diff
                    after: dict[str, bytes] = {}
                    for entry in structured["files"]:
                        part = (await client.read_resource(entry["after"])).contents
                        assert len(part) == 1, part
                        body = part[0]
                        if isinstance(body, types.TextResourceContents):
                            after[entry["file"]] = body.text.encode()
                        else:
                            after[entry["file"]] = base64.b64decode(body.blob)
                    unchanged(root)
                    result = await resolve(client, "apply", handle)
                    assert result.is_error is not True, text_of(result)
                    applied(root)
                    for file, content in after.items():
                        assert (root / file).read_bytes() == content, (file, content, (root / file).read_bytes())
                    # Resolved: the preview and its parts are gone.
                    for gone in (uri, structured["files"][0]["after"]):
                        try:
                            await client.read_resource(gone)
                        except MCPError:
                            pass
                        else:
                            raise AssertionError(f"{gone} is still served after resolve")

            await check(
                f"{t.name}: the preview is a resource: its diff, and after/<file> byte-identical to what apply writes",
                resource,
            )

            async def after_part_type(t: Target = t) -> None:
                reset(root)
                async with t.client() as client:
                    shown, handle = await preview(t, client)
                    try:
                        structured = shown.structured_content or {}
                        link = next(b for b in shown.content if isinstance(b, types.ResourceLink))
                        assert link.mime_type == "text/x-diff", link.mime_type
                        entry = next(f for f in structured["files"] if f["file"] == LOAD)
                        part = (await client.read_resource(entry["after"])).contents[0]
                        # It holds a Rust file's new content, not a diff: a client that renders
                        # by type must not show it as one.
                        assert part.mime_type != "text/x-diff", (
                            f"{entry['after']} (the file's new content) is labelled {part.mime_type!r}"
                        )
                    finally:
                        await resolve(client, "discard", handle)
                    unchanged(root)

            await check(f"{t.name}: a file's after/<file> part is not labelled as a diff", after_part_type)

            async def lifo(t: Target = t) -> None:
                reset(root)
                async with t.client() as client:
                    first, handle = await preview(t, client)
                    second, _ = await preview(t, client, RENAME, handle)
                    assert second.structured_content["pendingId"] != first.structured_content["pendingId"]
                    top = await resolve(client, "discard", handle, "the second one first")
                    assert top.is_error is not True, text_of(top)
                    assert top.structured_content["label"] == second.structured_content["summary"], top
                    assert top.structured_content["remaining"] == 1, top.structured_content
                    unchanged(root)
                    rest = await resolve(client, "apply", handle)
                    assert rest.is_error is not True, text_of(rest)
                    assert rest.structured_content["label"] == first.structured_content["summary"], rest
                    assert rest.structured_content["remaining"] == 0, rest.structured_content
                    applied(root)
                    assert (root / LOAD).read_text() != LOAD_RENAMED

            await check(f"{t.name}: two previews on one stack: resolve takes the last one first", lifo)

            async def forged(t: Target = t) -> None:
                reset(root)
                async with t.client() as client:
                    shown, handle = await preview(t, client)
                    for fake in FORGED:
                        for action in ("apply", "discard"):
                            result = await resolve(client, action, fake)
                            assert result.is_error is True, f"{fake}: {text_of(result)}"
                            assert text_of(result).startswith("Unknown handle"), text_of(result)
                            unchanged(root)
                        if t.http:
                            # An edit joining a forged stack is refused too, and pushes nothing.
                            joined = await client.call_tool("ast_edit", with_handle(RENAME, fake))
                            assert joined.is_error is True, text_of(joined)
                            assert text_of(joined).startswith("Unknown handle"), text_of(joined)
                    await expect_pending(client, handle, shown.structured_content["summary"])
                    unchanged(root)

            await check(f"{t.name}: forged and unknown handles are refused, apply nothing, reach no stack", forged)

            async def second_client(t: Target = t) -> None:
                reset(root)
                async with t.client() as first:
                    shown, handle = await preview(t, first)
                    async with t.client() as other:
                        for action in ("apply", "discard"):
                            result = await resolve(other, action, None)
                            assert result.is_error is True, text_of(result)
                            assert text_of(result).startswith("No pending action to resolve."), text_of(result)
                        if t.http:
                            # Its own preview gets its own handle, which is no way into the first's.
                            own, own_handle = await preview(t, other, RENAME)
                            assert own_handle != handle
                            done = await resolve(other, "discard", own_handle)
                            assert done.structured_content["label"] == own.structured_content["summary"]
                            await expect_empty(other, own_handle)
                    unchanged(root)
                    result = await resolve(first, "apply", handle)
                    assert result.is_error is not True, text_of(result)
                    applied(root)

            await check(f"{t.name}: a second client cannot apply the first client's preview", second_client)

            if t.http:

                async def no_handle(t: Target = t) -> None:
                    reset(root)
                    async with t.client() as client:
                        shown, handle = await preview(t, client)
                        for action in ("apply", "discard"):
                            result = await resolve(client, action, None)
                            assert result.is_error is True, text_of(result)
                            assert text_of(result).startswith("No pending action to resolve."), text_of(result)
                            assert "handle" in text_of(result), text_of(result)
                        unchanged(root)
                        await expect_pending(client, handle, shown.structured_content["summary"])

                await check("http: resolve without the handle is refused, naming `handle`; nothing applied", no_handle)

            if not t.http:

                async def list_changed(t: Target = t) -> None:
                    reset(root)
                    async with t.client() as client:
                        async with client.listen(tools_list_changed=True) as subscription:
                            assert subscription.honored.tools_list_changed, subscription.honored
                            events = subscription.__aiter__()
                            shown, _ = await preview(t, client)
                            label = shown.structured_content["summary"]
                            event = await asyncio.wait_for(events.__anext__(), timeout=10)
                            assert isinstance(event, ToolsListChanged), event
                            tools = await schemas(client)
                            assert label in (tools["resolve"].description or ""), tools["resolve"].description
                            await expect_pending(client, None, label)
                            event = await asyncio.wait_for(events.__anext__(), timeout=10)
                            assert isinstance(event, ToolsListChanged), event
                            tools = await schemas(client)
                            assert label not in (tools["resolve"].description or ""), tools["resolve"].description
                    unchanged(root)

                await check(
                    "stdio: subscriptions/listen tells of each stack change; resolve's listing follows", list_changed
                )

            async def undo(t: Target = t) -> None:
                reset(root)
                async with t.client() as client:
                    tools = await schemas(client)
                    _, handle = await preview(t, client)
                    assert (await resolve(client, "apply", handle)).is_error is not True
                    applied(root)
                    revert = await client.call_tool("undo", with_handle({}, handle))
                    assert revert.is_error is not True, text_of(revert)
                    valid(tools, "undo", revert)
                    structured = revert.structured_content or {}
                    assert structured["status"] == "preview", structured
                    assert (structured.get("handle") == handle) if t.http else ("handle" not in structured), structured
                    applied(root)
                    result = await resolve(client, "apply", handle)
                    assert result.is_error is not True, text_of(result)
                    assert result.structured_content["sourceToolName"] == "undo", result.structured_content
                    unchanged(root)

            await check(f"{t.name}: undo previews the revert of an apply; resolve applies it", undo)
    shutil.rmtree(root, ignore_errors=True)


# --- HTTP with --state: restarts -----------------------------------------------------------


async def restarts(binary: Path) -> None:
    root = small_workspace()
    state = Path(tempfile.mkdtemp(prefix="xcsh-interop-current-state-"))
    target = Target(binary, root, True, "--state", str(state))
    try:

        async def same_address() -> None:
            reset(root)
            async with target.client() as client:
                _, handle = await preview(target, client)
            assert target.server is not None
            addr = target.server.addr
            target.server.kill()
            unchanged(root)
            target.server = Http(binary, root, "--state", str(state), addr=addr)
            async with target.client() as client:
                result = await resolve(client, "apply", handle, "after a restart")
                assert result.is_error is not True, text_of(result)
                assert result.structured_content["outcome"] == "applied", result.structured_content
            applied(root)

        await check("http --state: SIGKILL between preview and resolve; restarted, the handle applies", same_address)

        async def another_port() -> None:
            reset(root)
            async with target.client() as client:
                _, handle = await preview(target, client)
            assert target.server is not None
            target.server.kill()
            target.server = Http(binary, root, "--state", str(state))
            async with target.client() as client:
                result = await resolve(client, "apply", handle, "after a restart elsewhere")
                assert result.is_error is not True, text_of(result)
            applied(root)

        await check("http --state: restarted on another port, the handle still applies", another_port)
    finally:
        target.close()

    async def without_state() -> None:
        reset(root)
        server = Http(binary, root)
        try:
            async with Client(server.url) as client:
                result = await client.call_tool("ast_edit", EDIT)
                handle = (result.structured_content or {}).get("handle")
                assert isinstance(handle, str), result.structured_content
            server.kill()
            server = Http(binary, root)
            async with Client(server.url) as client:
                result = await resolve(client, "apply", handle)
                assert result.is_error is True, text_of(result)
                assert text_of(result).startswith("Unknown handle"), text_of(result)
            unchanged(root)
        finally:
            server.kill()

    await check("http without --state: after a restart the handle is unknown and nothing is applied", without_state)
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(state, ignore_errors=True)


# --- Approvals by a person: input-required rounds -------------------------------------------


class Person:
    """An `elicitation_callback` that answers `action` and remembers what it was asked."""

    def __init__(self, action: str, content: dict[str, Any] | None = None) -> None:
        self.action = action
        self.content = content
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(self, _context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params)
        if self.action == "accept":
            return types.ElicitResult(action="accept", content=self.content if self.content is not None else {})
        return types.ElicitResult(action=self.action, content=self.content)


def answer(action: str) -> dict[str, Any]:
    """An `input_responses` with the person's `action` for the approval form."""
    content: dict[str, Any] | None = {} if action == "accept" else None
    return {"approval": types.ElicitResult(action=action, content=content)}


def tampered(state: str) -> str:
    """`state` with one character in its middle changed."""
    middle = len(state) // 2
    swap = "B" if state[middle] == "A" else "A"
    return state[:middle] + swap + state[middle + 1 :]


async def ask(client: Client, handle: str | None, reason: str = "interop") -> types.InputRequiredResult:
    """The first round of `resolve apply`, by hand: the server's question."""
    args = with_handle({"action": "apply", "reason": reason}, handle)
    first = await client.session.call_tool("resolve", args, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult), f"not an input-required result: {first}"
    assert first.request_state, first
    assert set((first.input_requests or {}).keys()) == {"approval"}, first.input_requests
    return first


async def retry(
    client: Client, handle: str | None, state: str, action: str | None, reason: str = "interop"
) -> types.CallToolResult | types.InputRequiredResult:
    args = with_handle({"action": "apply", "reason": reason}, handle)
    return await client.session.call_tool(
        "resolve",
        args,
        request_state=state,
        input_responses=answer(action) if action is not None else None,
        allow_input_required=True,
    )


def refused_answer(result: types.CallToolResult | types.InputRequiredResult, root: Path) -> None:
    assert isinstance(result, types.CallToolResult), f"asked again instead of refusing: {result}"
    assert result.is_error is True, f"the answer was taken: {text_of(result)}"
    assert "cannot be used" in text_of(result), text_of(result)
    unchanged(root)


async def approvals(binary: Path) -> None:
    root = small_workspace()
    async with targets(binary, root, "--approval", "human") as both:
        for t in both:

            async def accept(t: Target = t) -> None:
                reset(root)
                person = Person("accept")
                async with t.client(elicitation_callback=person) as client:
                    tools = await schemas(client)
                    shown, handle = await preview(t, client)
                    label = shown.structured_content["summary"]
                    result = await resolve(client, "apply", handle, "fix the unwraps")
                    assert result.is_error is not True, text_of(result)
                    assert "Applied" in text_of(result), text_of(result)
                    assert "Approved by the person." in text_of(result), text_of(result)
                    valid(tools, "resolve", result)
                    assert result.structured_content["outcome"] == "applied", result.structured_content
                    assert len(person.asked) == 1, f"asked {len(person.asked)} times"
                    form = person.asked[0]
                    assert label in form.message, form.message
                    assert "Reason: fix the unwraps" in form.message, form.message
                    schema = form.requested_schema
                    assert set(schema.get("properties", {})) == {"comment"}, schema
                    assert not schema.get("required"), schema
                    applied(root)
                    await expect_empty(client, handle)

            await check(f"{t.name} --approval human: accept (empty content) applies after one question", accept)

            async def decline(t: Target = t) -> None:
                reset(root)
                person = Person("decline", {"comment": "not now"})
                async with t.client(elicitation_callback=person) as client:
                    _, handle = await preview(t, client)
                    result = await resolve(client, "apply", handle)
                    assert result.is_error is True, text_of(result)
                    assert "The person declined" in text_of(result), text_of(result)
                    assert len(person.asked) == 1, person.asked
                    unchanged(root)
                    await expect_empty(client, handle)
                    unchanged(root)

            await check(f"{t.name} --approval human: decline writes nothing and drops the action", decline)

            async def cancel(t: Target = t) -> None:
                reset(root)
                person = Person("cancel")
                async with t.client(elicitation_callback=person) as client:
                    shown, handle = await preview(t, client)
                    result = await resolve(client, "apply", handle)
                    assert result.is_error is True, text_of(result)
                    assert "the person gave no answer" in text_of(result), text_of(result)
                    assert len(person.asked) == 1, person.asked
                    unchanged(root)
                    await expect_pending(client, handle, shown.structured_content["summary"])
                    unchanged(root)

            await check(f"{t.name} --approval human: cancel writes nothing and keeps the action pending", cancel)

            async def no_callback(t: Target = t) -> None:
                reset(root)
                async with t.client() as client:
                    shown, handle = await preview(t, client)
                    result = await resolve(client, "apply", handle)
                    assert result.is_error is True, text_of(result)
                    assert "did not declare the elicitation capability" in text_of(result), text_of(result)
                    unchanged(root)
                    await expect_pending(client, handle, shown.structured_content["summary"])

            await check(
                f"{t.name} --approval human: a client without elicitation_callback is refused; nothing written",
                no_callback,
            )

            async def altered_and_replayed(t: Target = t) -> None:
                reset(root)
                async with t.client(elicitation_callback=Person("accept")) as client:
                    shown, handle = await preview(t, client)
                    first = await ask(client, handle)
                    form = first.input_requests["approval"]
                    assert form.method == "elicitation/create", form
                    state = first.request_state
                    refused_answer(await retry(client, handle, tampered(state), "accept"), root)
                    # The genuine state, answered "no decision": used once.
                    cancelled = await retry(client, handle, state, "cancel")
                    assert isinstance(cancelled, types.CallToolResult) and cancelled.is_error, cancelled
                    assert "the person gave no answer" in text_of(cancelled), text_of(cancelled)
                    unchanged(root)
                    refused_answer(await retry(client, handle, state, "accept"), root)
                    await expect_pending(client, handle, shown.structured_content["summary"])
                    unchanged(root)

            await check(
                f"{t.name} --approval human: an altered request state, and a used one replayed, are refused",
                altered_and_replayed,
            )

            async def missing_answer(t: Target = t) -> None:
                reset(root)
                async with t.client(elicitation_callback=Person("accept")) as client:
                    shown, handle = await preview(t, client)
                    asked = await ask(client, handle)
                    result = await retry(client, handle, asked.request_state, None)
                    assert isinstance(result, types.CallToolResult), f"asked again: {result}"
                    assert result.is_error is True, f"applied without an answer: {text_of(result)}"
                    assert "the person gave no answer" in text_of(result), text_of(result)
                    unchanged(root)
                    await expect_pending(client, handle, shown.structured_content["summary"])
                    unchanged(root)

            await check(
                f"{t.name} --approval human: a retry with the request state but no answer writes nothing",
                missing_answer,
            )

            async def another_action(t: Target = t) -> None:
                reset(root)
                async with t.client(elicitation_callback=Person("accept")) as client:
                    first, handle = await preview(t, client)
                    asked = await ask(client, handle)
                    # Another preview on top: the answer was about the one below.
                    second, _ = await preview(t, client, RENAME, handle)
                    result = await retry(client, handle, asked.request_state, "accept")
                    assert isinstance(result, types.CallToolResult) and result.is_error, result
                    assert "no longer the top" in text_of(result), text_of(result)
                    unchanged(root)
                    await expect_pending(client, handle, second.structured_content["summary"], remaining=1)
                    await expect_pending(client, handle, first.structured_content["summary"], remaining=0)
                    unchanged(root)

            await check(
                f"{t.name} --approval human: an answer about an action no longer on top applies nothing",
                another_action,
            )

            async def another_conversation(t: Target = t) -> None:
                reset(root)
                async with t.client(elicitation_callback=Person("accept")) as one:
                    _, one_handle = await preview(t, one)
                    asked = await ask(one, one_handle)
                    async with t.client(elicitation_callback=Person("accept")) as other:
                        shown, other_handle = await preview(t, other)
                        # Over HTTP: the same server, another handle's stack. Over stdio:
                        # another server process, with its own sealing key.
                        refused_answer(await retry(other, other_handle, asked.request_state, "accept"), root)
                        await expect_pending(other, other_handle, shown.structured_content["summary"])
                    await resolve(one, "discard", one_handle)
                unchanged(root)

            await check(
                f"{t.name} --approval human: a request state from another conversation is refused",
                another_conversation,
            )
    shutil.rmtree(root, ignore_errors=True)


async def approvals_across_restarts(binary: Path) -> None:
    root = small_workspace()
    state = Path(tempfile.mkdtemp(prefix="xcsh-interop-current-state-"))
    extra = ("--approval", "human", "--state", str(state))
    target = Target(binary, root, True, *extra)
    try:

        async def answered_after_restart() -> None:
            reset(root)
            async with target.client(elicitation_callback=Person("accept")) as client:
                _, handle = await preview(target, client)
                asked = await ask(client, handle)
            assert target.server is not None
            target.server.kill()
            target.server = Http(binary, root, *extra)
            async with target.client(elicitation_callback=Person("accept")) as client:
                result = await retry(client, handle, asked.request_state, "accept")
                assert isinstance(result, types.CallToolResult), result
                assert result.is_error is not True, text_of(result)
                assert "Approved by the person." in text_of(result), text_of(result)
            applied(root)

        await check(
            "http --state --approval human: a question asked before a SIGKILL is answered after the restart",
            answered_after_restart,
        )

        async def replayed_after_restart() -> None:
            reset(root)
            async with target.client(elicitation_callback=Person("accept")) as client:
                shown, handle = await preview(target, client)
                asked = await ask(client, handle)
                cancelled = await retry(client, handle, asked.request_state, "cancel")
                assert isinstance(cancelled, types.CallToolResult) and cancelled.is_error, cancelled
                refused_answer(await retry(client, handle, asked.request_state, "accept"), root)
            assert target.server is not None
            target.server.kill()
            target.server = Http(binary, root, *extra)
            async with target.client(elicitation_callback=Person("accept")) as client:
                try:
                    refused_answer(await retry(client, handle, asked.request_state, "accept"), root)
                finally:
                    await resolve(client, "discard", handle)

        await check(
            "http --state --approval human: a request state used before a restart is refused after it",
            replayed_after_restart,
        )
    finally:
        target.close()
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)


# --- The widest preview: bounded structured content -----------------------------------------


async def widest(t: Target, files: list[str], wide: Path) -> None:
    """The widest preview's checks on one target, in one conversation."""
    async with t.client() as client:
        tools = await schemas(client)
        got: dict[str, Any] = {}

        async def widest_preview() -> None:
            shown, handle = await preview(t, client)
            got["shown"], got["handle"] = shown, handle
            structured = shown.structured_content or {}
            size = wire_size(structured)
            assert size <= MAX_STRUCTURED, f"structuredContent is {size} bytes"
            valid(tools, "ast_edit", shown)
            totals = structured["totals"]
            assert totals["filesChanged"] == WIDE_FILES, totals
            assert totals["replacements"] == WIDE_FILES * WIDE_PER_FILE, totals
            assert 0 < len(structured["files"]) <= 200, len(structured["files"])
            assert len(structured["files"]) + structured["filesOmitted"] == WIDE_FILES, structured
            wide_unchanged(wide)

        await check(
            f"{t.name}: the widest preview ({WIDE_FILES} files): structuredContent <= 64 KiB and valid",
            widest_preview,
        )

        async def widest_resource() -> None:
            structured = got["shown"].structured_content or {}
            # A file the list left out: its `after/` part is there all the same.
            listed = {entry["file"] for entry in structured["files"]}
            omitted = next(f for f in reversed(files) if f not in listed)
            index = int(re.search(r"fichier_généré_(\d{5})_", omitted).group(1))
            part = (await client.read_resource(structured["preview"] + "/after/" + quote(omitted))).contents[0]
            assert isinstance(part, types.TextResourceContents), part
            assert part.text == wide_file(index).replace(".unwrap()", "?"), part.text
            try:
                whole = (await client.read_resource(structured["preview"])).contents[0]
            except MCPError as error:
                raise AssertionError(f"the SDK could not read the whole preview: {error}") from error
            assert isinstance(whole, types.TextResourceContents), whole
            diff = whole.text
            assert diff.count("diff --git ") == WIDE_FILES, diff.count("diff --git ")
            assert diff.count("\n+") - diff.count("\n+++ ") == WIDE_FILES * WIDE_PER_FILE
            wide_unchanged(wide)

        await check(
            f"{t.name}: the widest preview is readable as a resource, whole and per file",
            widest_resource,
        )

        async def widest_discard() -> None:
            handle = got["handle"]
            discarded = await resolve(client, "discard", handle)
            assert discarded.is_error is not True, text_of(discarded)
            size = wire_size(discarded.structured_content)
            assert size <= MAX_STRUCTURED, f"resolve's structuredContent is {size} bytes"
            valid(tools, "resolve", discarded)
            await expect_empty(client, handle)
            wide_unchanged(wide)

        await check(f"{t.name}: resolve on the widest preview: structuredContent <= 64 KiB", widest_discard)

        async def widest_search() -> None:
            found = await client.call_tool("ast_grep", {"pat": "$X.unwrap()", "lang": "rust"})
            assert found.is_error is not True, text_of(found)
            size = wire_size(found.structured_content)
            assert size <= MAX_STRUCTURED, f"structuredContent is {size} bytes"
            valid(tools, "ast_grep", found)
            found_totals = (found.structured_content or {})["totals"]
            assert found_totals["filesMatched"] == WIDE_FILES, found_totals
            matches = (found.structured_content or {})["matches"]
            omitted_matches = (found.structured_content or {})["matchesOmitted"]
            assert len(matches) + omitted_matches == found_totals["matches"], found_totals

        await check(
            f"{t.name}: the widest search: ast_grep's structuredContent <= 64 KiB and valid", widest_search
        )


async def bounds(binary: Path, wide: Path) -> None:
    files = sorted(str(p.relative_to(wide)) for p in wide.rglob("*.rs"))
    async with targets(binary, wide) as both:
        for t in both:
            try:
                await widest(t, files, wide)
            except Exception:  # noqa: BLE001 - the client could not even connect
                failed.append(f"{t.name}: the widest preview's checks")
                print(f"FAIL {t.name}: the widest preview's checks could not run\n{traceback.format_exc()}", flush=True)

    deep = deep_workspace()
    server = Http(binary, deep)
    try:

        async def deep_preview() -> None:
            async with Client(server.url) as client:
                try:
                    shown = await client.call_tool("ast_edit", EDIT)
                except MCPError as error:
                    raise AssertionError(f"the preview's answer did not reach the SDK: {error}") from error
                assert shown.is_error is not True, text_of(shown)
                structured = shown.structured_content or {}
                assert structured["totals"]["filesChanged"] == WIDE_FILES, structured["totals"]
                handle = structured["handle"]
                assert (await resolve(client, "discard", handle)).is_error is not True

        await check(
            f"http: a preview of {WIDE_FILES} files with long paths reaches the SDK (within its 1 MiB event limit)",
            deep_preview,
        )
    finally:
        server.kill()
        shutil.rmtree(deep, ignore_errors=True)

    # Refusals: the person gives no answer on the widest preview, or nobody can be asked.
    async with targets(binary, wide, "--approval", "human") as both:
        for t in both:

            async def widest_refusals(t: Target = t) -> None:
                sizes: dict[str, int | str] = {}
                for why, person in (("cancelled", Person("cancel")), ("no elicitation capability", None)):
                    options = {"elicitation_callback": person} if person is not None else {}
                    async with t.client(**options) as client:
                        _, handle = await preview(t, client)
                        try:
                            refused = await resolve(client, "apply", handle)
                        except MCPError as error:
                            sizes[why] = f"not received by the SDK: {error}"
                        else:
                            assert refused.is_error is True, text_of(refused)
                            sizes[why] = wire_size(refused.structured_content)
                        await resolve(client, "discard", handle)
                wide_unchanged(wide)
                over = {why: size for why, size in sizes.items() if not isinstance(size, int) or size > MAX_STRUCTURED}
                assert not over, f"resolve's refusals, structuredContent bytes (limit {MAX_STRUCTURED}): {over}"

            await check(
                f"{t.name} --approval human: resolve's refusals on the widest preview keep structuredContent <= 64 KiB",
                widest_refusals,
            )


# --- Progress and cancellation --------------------------------------------------------------


async def progress(binary: Path, wide: Path) -> None:
    async with targets(binary, wide) as both:
        for t in both:

            async def reports(t: Target = t) -> None:
                seen: list[tuple[float, float | None, str | None]] = []

                async def on_progress(value: float, total: float | None, message: str | None) -> None:
                    seen.append((value, total, message))

                async with t.client() as client:
                    found = await client.call_tool(
                        "ast_grep", {"pat": "$X.unwrap()", "lang": "rust"}, progress_callback=on_progress
                    )
                    assert found.is_error is not True, text_of(found)
                assert len(seen) >= 2, f"{len(seen)} progress reports for {WIDE_FILES} files: {seen}"
                values = [value for value, _, _ in seen]
                assert values == sorted(values) and len(set(values)) == len(values), values
                assert all(message and "files scanned" in message for _, _, message in seen), seen

            await check(f"{t.name}: ast_grep over {WIDE_FILES} files reports progress to progress_callback", reports)

            async def cancellation(t: Target = t) -> None:
                async with t.client() as client:
                    # The whole edit, once, to know how long it takes uncancelled.
                    started = time.monotonic()
                    _, handle = await preview(t, client)
                    full = time.monotonic() - started
                    assert (await resolve(client, "discard", handle)).is_error is not True
                    # A small preview below, so the stack shows what the cancelled call left.
                    marker = {"ops": [{"pat": "marker_7()", "out": "marker_seven()"}], "lang": "rust"}
                    small, handle = await preview(t, client, marker)
                    label = small.structured_content["summary"]
                    going = asyncio.Event()

                    async def on_progress(value: float, total: float | None, message: str | None) -> None:
                        going.set()

                    call = asyncio.create_task(
                        client.call_tool("ast_edit", with_handle(EDIT, handle), progress_callback=on_progress)
                    )
                    await asyncio.wait_for(going.wait(), timeout=60)
                    call.cancel()
                    try:
                        result = await call
                    except asyncio.CancelledError:
                        pass
                    else:
                        raise AssertionError(f"the call finished before it was cancelled: {text_of(result)[:200]}")
                    started = time.monotonic()
                    one_file = small.structured_content["files"][0]["file"]
                    found = await client.call_tool("ast_grep", {"pat": "marker_7()", "lang": "rust", "path": one_file})
                    took = time.monotonic() - started
                    assert found.is_error is not True, text_of(found)
                    assert "marker_7()" in text_of(found), text_of(found)
                    assert took < max(1.0, full / 2), f"the next call took {took:.2f}s (the whole edit {full:.2f}s)"
                    # Long enough for the cancelled edit to have finished, had it gone on.
                    await asyncio.sleep(max(1.0, 1.5 * full))
                    await expect_pending(client, handle, label)
                wide_unchanged(wide)

            await check(
                f"{t.name}: a cancelled ast_edit stops: the next call answers at once, and it pushes no preview",
                cancellation,
            )


async def main() -> int:
    binary = checks.binary()
    if binary is None:
        return 2
    started = time.monotonic()
    await core(binary)
    await restarts(binary)
    await approvals(binary)
    await approvals_across_restarts(binary)
    wide = wide_workspace()
    try:
        await bounds(binary, wide)
        await progress(binary, wide)
    finally:
        shutil.rmtree(wide, ignore_errors=True)
    print(f"({time.monotonic() - started:.1f}s)")
    return checks.tally()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
