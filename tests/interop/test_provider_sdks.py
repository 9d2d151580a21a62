"""Interop: every message `xcsh session --dialect D` returns is a valid request message for
that provider, as the provider's own SDK defines one.

For each of the five dialects, a two-turn conversation against one `xcsh session --dialect D`
process on a scratch workspace:

1. a response (validated against the SDK's response type first, so the fixture is what the
   API returns) with text and two parallel calls, `ast_grep` and `ast_edit` (OpenAI's in
   strict form: every optional argument sent as null);
2. a response calling `resolve` with `action: "apply"`.

After each, every returned message validates against the SDK's request types (anthropic
`MessageParam`, openai `ChatCompletionMessageParam` and `ResponseInputItemParam`,
google-genai `types.Content`, botocore's `ParamValidator` on bedrock-runtime's `Converse`
input), each call is answered once and in order (Gemini: by name, in order), the reminder
follows the results, `tool_choice` forces `resolve` after turn 1 (and validates as the SDK's
tool-choice type) and is null after turn 2, and the file is written only then.

With the `provider_turns` example's binary as a second argument, the messages it prints
(results with an image, and a failure) are validated the same way, and each image is checked
to arrive in the provider's own image shape with its bytes intact.

Plain Python, no test runner needed:

    .venv/bin/python tests/interop/test_provider_sdks.py [path/to/xcsh] [path/to/provider_turns]

The binary defaults to $XCSH_BIN, then target/debug/xcsh. Exit status 0 when every check
passed; the last line is `N passed, M failed`.
"""

from __future__ import annotations

import base64
import collections.abc as cabc
import json
import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, Callable

import anthropic.types as anthropic_types
import botocore.session
import openai.types.chat as openai_chat
import openai.types.responses as openai_responses
from botocore.validate import ParamValidator
from google.genai import types as genai
from pydantic import ConfigDict, TypeAdapter

REPO = Path(__file__).resolve().parents[2]
DIALECTS = ["anthropic", "openai-chat", "openai-responses", "gemini", "bedrock"]
REMINDER = (
    "<system-reminder>\nThis is a preview. Call the `resolve` tool to apply or discard these"
    " changes.\n</system-reminder>"
)
SOURCE = """pub fn load(path: &str) -> u32 {
    let text = std::fs::read_to_string(path).unwrap();
    text.trim().parse().unwrap()
}
"""
APPLIED = """pub fn load(path: &str) -> u32 {
    let text = std::fs::read_to_string(path)?;
    text.trim().parse()?
}
"""
GREP = {"pat": "$X.unwrap()", "lang": "rust"}
EDIT = {"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}
APPLY = {"action": "apply", "reason": "The user approved propagating the errors."}
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5"
    "ErkJggg=="
)

passed: list[str] = []
failed: list[str] = []


def check(name: str, body: Callable[[], None]) -> None:
    """Runs one check; a failure is recorded and reported, and the next check still runs."""
    try:
        body()
    except Exception:  # noqa: BLE001 - every failure is reported the same way
        failed.append(name)
        print(f"FAIL {name}\n{traceback.format_exc()}", flush=True)
    else:
        passed.append(name)
        print(f"ok   {name}", flush=True)


# --- the SDKs' own types -------------------------------------------------------------------

STRICT = ConfigDict(extra="forbid")


def consumed(value: Any) -> Any:
    """The SDKs declare content as `Iterable[...]`, which pydantic validates lazily: walking
    the validated value validates every item."""
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {k: consumed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, cabc.Iterator)):
        return [consumed(v) for v in value]
    return value


class TypedDictValidator:
    """A TypedDict of the SDK, strictly: unknown keys refused, lazy iterables consumed."""

    def __init__(self, typ: Any) -> None:
        self.adapter = TypeAdapter(typ, config=STRICT)

    def __call__(self, value: Any) -> None:
        consumed(self.adapter.validate_python(value))


ANTHROPIC_MESSAGE = TypedDictValidator(anthropic_types.MessageParam)
ANTHROPIC_TOOL_CHOICE = TypedDictValidator(anthropic_types.ToolChoiceParam)
CHAT_MESSAGE = TypedDictValidator(openai_chat.ChatCompletionMessageParam)
CHAT_TOOL_CHOICE = TypedDictValidator(openai_chat.ChatCompletionToolChoiceOptionParam)
RESPONSES_ITEM = TypedDictValidator(openai_responses.ResponseInputItemParam)
RESPONSES_TOOL_CHOICE = TypedDictValidator(openai_responses.response_create_params.ToolChoice)

BEDROCK = botocore.session.get_session().get_service_model("bedrock-runtime")
CONVERSE = BEDROCK.operation_model("Converse")


def enum_errors(value: Any, shape: Any, path: str) -> list[str]:
    """botocore's validator checks types and required members, not enums: the service
    refuses a string outside its shape's enum (`status`, an image's `format`), so check it."""
    errors = []
    if shape.type_name == "string" and shape.enum and value not in shape.enum:
        errors.append(f"{path}: {value!r} is not one of {shape.enum}")
    elif shape.type_name == "structure" and isinstance(value, dict):
        for key, member in shape.members.items():
            if key in value:
                errors += enum_errors(value[key], member, f"{path}.{key}")
    elif shape.type_name == "list" and isinstance(value, list):
        for i, item in enumerate(value):
            errors += enum_errors(item, shape.member, f"{path}[{i}]")
    return errors


def bedrock_validate(params: dict, shape: Any) -> None:
    report = ParamValidator().validate(params, shape)
    if report.has_errors():
        raise AssertionError(report.generate_report())
    errors = enum_errors(params, shape, "params")
    if errors:
        raise AssertionError("\n".join(errors))


def validate_messages(dialect: str, messages: list[dict]) -> None:
    assert messages, "no messages"
    if dialect == "anthropic":
        for message in messages:
            ANTHROPIC_MESSAGE(message)
    elif dialect == "openai-chat":
        for message in messages:
            CHAT_MESSAGE(message)
    elif dialect == "openai-responses":
        for item in messages:
            RESPONSES_ITEM(item)
    elif dialect == "gemini":
        for content in messages:
            # As the wire JSON (camelCase, bytes in base64), which the SDK's models parse.
            genai.Content.model_validate_json(json.dumps(content))
    elif dialect == "bedrock":
        bedrock_validate({"modelId": "anthropic.claude-sonnet-4-5", "messages": messages},
                         CONVERSE.input_shape)
    else:
        raise AssertionError(dialect)


def validate_tool_choice(dialect: str, choice: Any, definitions: list[dict]) -> None:
    if dialect == "anthropic":
        ANTHROPIC_TOOL_CHOICE(choice)
    elif dialect == "openai-chat":
        CHAT_TOOL_CHOICE(choice)
    elif dialect == "openai-responses":
        RESPONSES_TOOL_CHOICE(choice)
    elif dialect == "gemini":
        genai.ToolConfig.model_validate(choice)
    elif dialect == "bedrock":
        bedrock_validate(
            {"modelId": "m", "messages": [{"role": "user", "content": [{"text": "hi"}]}],
             "toolConfig": {"tools": definitions, "toolChoice": choice}},
            CONVERSE.input_shape,
        )


def validate_response(dialect: str, response: dict) -> None:
    """The fixture is what the API returns: it parses as the SDK's response type."""
    if dialect == "anthropic":
        anthropic_types.Message.model_validate(response)
    elif dialect == "openai-chat":
        openai_chat.ChatCompletion.model_validate(response)
    elif dialect == "openai-responses":
        openai_responses.Response.model_validate(response)
    elif dialect == "gemini":
        genai.GenerateContentResponse.model_validate_json(json.dumps(response))
    elif dialect == "bedrock":
        bedrock_validate(response, CONVERSE.output_shape)


# --- responses as each API returns them -----------------------------------------------------

def strict_form(schema: dict, value: Any) -> Any:
    """OpenAI strict mode: every property sent, `null` for those the model leaves out."""
    if isinstance(value, dict) and "properties" in schema:
        filled = {}
        for name, sub in schema["properties"].items():
            filled[name] = strict_form(sub, value[name]) if name in value else None
        return filled
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [strict_form(schema["items"], v) for v in value]
    return value


def response(dialect: str, calls: list[tuple[str, str, dict]], text: str | None) -> dict:
    if dialect == "anthropic":
        content = [{"type": "text", "text": text}] if text else []
        content += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls]
        return {"id": "msg_01", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5", "content": content, "stop_reason": "tool_use",
                "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 50}}
    if dialect == "openai-chat":
        return {"id": "chatcmpl-01", "object": "chat.completion", "created": 1767225600,
                "model": "gpt-5", "choices": [{"index": 0, "finish_reason": "tool_calls",
                                               "logprobs": None, "message": {
                    "role": "assistant", "content": text, "refusal": None,
                    "tool_calls": [{"id": i, "type": "function",
                                    "function": {"name": n, "arguments": json.dumps(a)}}
                                   for i, n, a in calls]}}]}
    if dialect == "openai-responses":
        output: list[dict] = []
        if text:
            output.append({"type": "message", "id": "msg_01", "role": "assistant",
                           "status": "completed",
                           "content": [{"type": "output_text", "text": text,
                                        "annotations": []}]})
        output += [{"type": "function_call", "id": f"fc_{i}", "call_id": i, "name": n,
                    "arguments": json.dumps(a), "status": "completed"} for i, n, a in calls]
        return {"id": "resp_01", "object": "response", "created_at": 1767225600,
                "model": "gpt-5", "output": output, "parallel_tool_calls": True,
                "tool_choice": "auto", "tools": [], "status": "completed"}
    if dialect == "gemini":
        parts: list[dict] = [{"text": text}] if text else []
        parts += [{"functionCall": {"name": n, "args": a}} for _, n, a in calls]
        return {"candidates": [{"index": 0, "finishReason": "STOP",
                                "content": {"role": "model", "parts": parts}}],
                "modelVersion": "gemini-3-pro",
                "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 50}}
    if dialect == "bedrock":
        content = [{"text": text}] if text else []
        content += [{"toolUse": {"toolUseId": i, "name": n, "input": a}} for i, n, a in calls]
        return {"output": {"message": {"role": "assistant", "content": content}},
                "stopReason": "tool_use",
                "usage": {"inputTokens": 100, "outputTokens": 50, "totalTokens": 150},
                "metrics": {"latencyMs": 900}}
    raise AssertionError(dialect)


# --- reading the answers back ----------------------------------------------------------------

def answers(dialect: str, messages: list[dict]) -> tuple[list[tuple[str, str, bool]], list[str]]:
    """(id or name, text, error?) per answered call, in order, and the reminder texts; checks
    each provider's ordering rule on the way."""
    out: list[tuple[str, str, bool]] = []
    reminders: list[str] = []

    def texts(blocks: list[dict], key: str = "text") -> str:
        return "\n".join(b[key] for b in blocks if key in b)

    if dialect == "anthropic":
        assert len(messages) == 1 and messages[0]["role"] == "user", messages
        for block in messages[0]["content"]:
            if block["type"] == "tool_result":
                assert not reminders, "text before a tool_result block"
                out.append((block["tool_use_id"], texts(block["content"]),
                            block.get("is_error", False)))
            else:
                assert block["type"] == "text", block
                reminders.append(block["text"])
    elif dialect == "openai-chat":
        for message in messages:
            if message["role"] == "tool":
                assert not reminders, "a tool message after the user message"
                text = message["content"]
                out.append((message["tool_call_id"], text.removeprefix("Error: "),
                            text.startswith("Error: ")))
            else:
                assert message["role"] == "user", message
                reminders.extend(p["text"] for p in message["content"] if p["type"] == "text")
    elif dialect == "openai-responses":
        for item in messages:
            if item["type"] == "function_call_output":
                assert not reminders, "an output after the reminder message"
                text = item["output"] if isinstance(item["output"], str) else texts(item["output"])
                out.append((item["call_id"], text.removeprefix("Error: "),
                            text.startswith("Error: ")))
            else:
                assert item["type"] == "message" and item["role"] == "user", item
                reminders.extend(p["text"] for p in item["content"])
    elif dialect == "gemini":
        assert len(messages) == 1 and messages[0]["role"] == "user", messages
        for part in messages[0]["parts"]:
            if "functionResponse" in part:
                assert not reminders, "a text part before a functionResponse"
                fr = part["functionResponse"]
                error = "error" in fr["response"]
                out.append((fr["name"], fr["response"]["error" if error else "output"], error))
            else:
                reminders.append(part["text"])
    elif dialect == "bedrock":
        assert len(messages) == 1 and messages[0]["role"] == "user", messages
        for block in messages[0]["content"]:
            if "toolResult" in block:
                assert not reminders, "a text block before a toolResult"
                result = block["toolResult"]
                out.append((result["toolUseId"], texts(result["content"]),
                            result.get("status") == "error"))
            else:
                reminders.append(block["text"])
    return out, reminders


# --- the conversation ------------------------------------------------------------------------

class Session:
    """One `xcsh session --dialect D` process: a response line in, a turn line out."""

    def __init__(self, binary: Path, dialect: str, root: Path) -> None:
        self.process = subprocess.Popen(
            [str(binary), "session", "--dialect", dialect, "--root", str(root)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "RUST_LOG": "warn"},
        )

    def turn(self, response: dict) -> dict:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps(response) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, f"xcsh session ended: {self.close()}"
        answer = json.loads(line)
        assert set(answer) == {"messages", "tool_choice"}, answer
        return answer

    def close(self) -> str:
        """Ends the input and waits: the process exits once its input is done."""
        if self.process.returncode is None:
            _, err = self.process.communicate(timeout=30)
            self.err = err
        return self.err


def definitions(binary: Path, dialect: str) -> list[dict]:
    out = subprocess.run([str(binary), "tools", "--dialect", dialect], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def forced(dialect: str) -> dict:
    return {
        "anthropic": {"type": "tool", "name": "resolve"},
        "openai-chat": {"type": "function", "function": {"name": "resolve"}},
        "openai-responses": {"type": "function", "name": "resolve"},
        "gemini": {"function_calling_config": {"mode": "ANY",
                                               "allowed_function_names": ["resolve"]}},
        "bedrock": {"tool": {"name": "resolve"}},
    }[dialect]


def conversation(binary: Path, dialect: str) -> None:
    root = Path(tempfile.mkdtemp(prefix=f"xcsh-sdk-{dialect}-"))
    (root / "src").mkdir()
    lib = root / "src" / "lib.rs"
    lib.write_text(SOURCE)
    defs = definitions(binary, dialect)
    grep, edit, apply = GREP, EDIT, APPLY
    if dialect.startswith("openai"):
        params = {(d.get("function") or d)["name"]: (d.get("function") or d)["parameters"]
                  for d in defs}
        grep = strict_form(params["ast_grep"], GREP)
        edit = strict_form(params["ast_edit"], EDIT)
        apply = strict_form(params["resolve"], APPLY)
        assert grep["path"] is None and edit["glob"] is None, (grep, edit)
    by_name = dialect == "gemini"

    session = Session(binary, dialect, root)
    try:
        first_response = response(dialect, [("call_grep", "ast_grep", grep),
                                            ("call_edit", "ast_edit", edit)],
                                  "I'll find the unwraps and preview replacing them.")
        validate_response(dialect, first_response)
        first = session.turn(first_response)
        validate_messages(dialect, first["messages"])
        answered, reminders = answers(dialect, first["messages"])
        keys = [a[0] for a in answered]
        assert keys == (["ast_grep", "ast_edit"] if by_name else ["call_grep", "call_edit"]), keys
        assert not any(a[2] for a in answered), answered
        assert "2 matches in 1 file" in answered[0][1], answered[0][1]
        assert "AST Edit preview: 2 replacements in 1 file" in answered[1][1], answered[1][1]
        assert reminders == [REMINDER], reminders
        assert first["tool_choice"] == forced(dialect), first["tool_choice"]
        validate_tool_choice(dialect, first["tool_choice"], defs)
        assert lib.read_text() == SOURCE, "the preview wrote the file"

        second_response = response(dialect, [("call_apply", "resolve", apply)], None)
        validate_response(dialect, second_response)
        second = session.turn(second_response)
        validate_messages(dialect, second["messages"])
        answered, reminders = answers(dialect, second["messages"])
        assert answered == [("resolve" if by_name else "call_apply",
                             "Applied 2 replacements in 1 file.", False)], answered
        assert reminders == [], reminders
        assert second["tool_choice"] is None, second["tool_choice"]
        assert lib.read_text() == APPLIED, lib.read_text()
    finally:
        err = session.close()
    assert session.process.returncode == 0, err


def image_of(dialect: str, messages: list[dict]) -> str:
    """The base64 image of the first result, read from the provider's own image shape."""
    if dialect == "anthropic":
        image = messages[0]["content"][0]["content"][1]
        assert image["type"] == "image" and image["source"]["type"] == "base64", image
        assert image["source"]["media_type"] == "image/png"
        return image["source"]["data"]
    if dialect == "openai-chat":
        part = messages[-1]["content"][1]
        assert part["type"] == "image_url", part
        prefix = "data:image/png;base64,"
        assert part["image_url"]["url"].startswith(prefix)
        return part["image_url"]["url"].removeprefix(prefix)
    if dialect == "openai-responses":
        part = messages[0]["output"][1]
        assert part["type"] == "input_image", part
        prefix = "data:image/png;base64,"
        return part["image_url"].removeprefix(prefix)
    if dialect == "gemini":
        content = genai.Content.model_validate_json(json.dumps(messages[0]))
        blob = content.parts[0].function_response.parts[0].inline_data
        assert blob.mime_type == "image/png", blob
        return base64.b64encode(blob.data).decode()
    if dialect == "bedrock":
        image = messages[0]["content"][0]["toolResult"]["content"][1]["image"]
        assert image["format"] == "png", image
        return image["source"]["bytes"]
    raise AssertionError(dialect)


def image_turns(example: Path) -> dict[str, dict]:
    out = subprocess.run([str(example)], check=True, capture_output=True, text=True).stdout
    turns = {}
    for line in out.splitlines():
        turn = json.loads(line)
        turns[turn["dialect"]] = turn
    assert sorted(turns) == sorted(DIALECTS), sorted(turns)
    return turns


# Messages each provider refuses: the validators must refuse them too, or the checks above
# could not fail.
REFUSED = {
    "anthropic": [
        {"role": "user", "content": [{"type": "tool_result", "content": "no id"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/svg+xml",
                                         "data": PNG}}]}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                      "isError": True}]},
    ],
    "openai-chat": [
        {"role": "tool", "tool_call_id": "c", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG}}]},
        {"role": "tool", "content": "no id"},
    ],
    "openai-responses": [
        {"type": "function_call_output", "call_id": "c"},
        {"type": "function_call_output", "call_id": "c", "output": [
            {"type": "image", "image_url": "data:image/png;base64," + PNG}]},
    ],
    "gemini": [
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "result": {}}}]},
        {"role": "user", "parts": [{"inlineData": {"mime": "image/png", "data": PNG}}]},
    ],
    "bedrock": [
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t", "status": "failed",
                                                     "content": [{"text": "x"}]}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t", "content": [
            {"image": {"format": "svg", "source": {"bytes": PNG}}}]}}]},
    ],
}


def validators_refuse(dialect: str) -> None:
    for message in REFUSED[dialect]:
        try:
            validate_messages(dialect, [message])
        except Exception:  # noqa: BLE001 - any refusal will do
            continue
        raise AssertionError(f"the {dialect} validator accepted {message}")


def main() -> int:
    default = os.environ.get("XCSH_BIN") or str(REPO / "target" / "debug" / "xcsh")
    binary = Path(sys.argv[1] if len(sys.argv) > 1 else default)
    example = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    for dialect in DIALECTS:
        check(f"{dialect}: the SDK's validator refuses malformed messages",
              lambda d=dialect: validators_refuse(d))
    for dialect in DIALECTS:
        check(f"{dialect}: a two-turn conversation, every message valid for the SDK",
              lambda d=dialect: conversation(binary, d))
    if example is not None:
        turns = image_turns(example)
        for dialect in DIALECTS:
            def images(d: str = dialect) -> None:
                messages = turns[d]["messages"]
                validate_messages(d, messages)
                assert image_of(d, messages) == PNG
                answered, _ = answers(d, messages)
                assert [a[2] for a in answered] == [False, True], answered
            check(f"{dialect}: a result with an image and a failure, valid for the SDK",
                  images)
    else:
        print("note: no provider_turns example given; the image messages were not checked")
    print(f"{len(passed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
