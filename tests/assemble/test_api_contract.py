"""The Python API's contract (issue 9 items 14-17, 19, 20): bad arguments fail at once with a
message naming the field and the fix; shared hooks, can_use_tool and tool results behave as
the Agent SDK's users expect; `arun`; the public names type-check under `mypy --strict`."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any

import pydantic
import pytest

import loopwright as lw
from loopwright.tools.output import to_output
from tests.helpers import text, use

NOOP = lw.Tool("noop", "does nothing", {"type": "object", "properties": {}}, lambda x: "ok")


# --- item 14: clear errors at run(...) (AgentOptions(...)'s: tests/options/test_options.py) ------

def test_bad_run_arguments_fail_before_anything_runs(tmp_path: Path) -> None:
    calls: list[Any] = []
    model = lw.ScriptedModel(lambda h: calls.append(h) or {"content": [text("hi")]})
    with pytest.raises(TypeError, match=r"prompt must be a str \(or a list of content blocks\), not int"):
        lw.run(123, lw.AgentOptions(model=model))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cwd .*missing.* is not an existing directory"):
        lw.run("hi", lw.AgentOptions(model=model, cwd=tmp_path / "missing"))
    with pytest.raises(TypeError, match="options must be an AgentOptions"):
        lw.run("hi", {"model": model})  # type: ignore[arg-type]
    assert calls == []


# --- item 15: one Hooks object, concurrent runs ---------------------------------------------------

def test_one_hooks_object_shared_by_concurrent_runs_keeps_state_per_run(tmp_path: Path) -> None:
    hooks = lw.Hooks()

    @hooks.on("PreToolUse")
    def stop_when_asked(data: dict[str, Any]) -> dict[str, Any] | None:
        return {"continue": False, "stopReason": "A asked to stop"} if data["tool_input"].get("stop") else None

    a_done = asyncio.Event()

    async def wait(x: dict[str, Any]) -> str:
        await a_done.wait()
        return "waited"

    tools = [NOOP, lw.Tool("wait", "waits for run A", {"type": "object", "properties": {}}, wait)]
    a_opts = lw.AgentOptions(model=lw.ScriptedModel([[use("a1", "noop", {"stop": True})], [text("A done")]]),
                             tools=tools, hooks=hooks, cwd=tmp_path)
    b_opts = lw.AgentOptions(model=lw.ScriptedModel([[use("b1", "wait")], [use("b2", "noop")], [text("B done")]]),
                             tools=tools, hooks=hooks, cwd=tmp_path)

    async def both() -> tuple[lw.ResultMessage, lw.ResultMessage]:
        b = asyncio.create_task(lw.arun("b", b_opts))
        await asyncio.sleep(0)  # B is running (waiting in its first tool) when A starts and stops
        a = await lw.arun("a", a_opts)
        a_done.set()
        return a, await b

    a, b = asyncio.run(both())
    assert a.subtype == "error_during_execution" and a.errors == ["A asked to stop"]
    assert b.subtype == "success" and b.result == "B done"  # A's `continue: false` did not end B
    assert [blk["content"] for m in b.messages for blk in m["content"] if blk["type"] == "tool_result"] == ["waited", "ok"]
    assert hooks.halted is None and hooks.reports == []  # the caller's object holds no run's state


# --- item 16: can_use_tool -----------------------------------------------------------------------

def gated(turns: list[Any], can_use_tool: Any, tmp_path: Path) -> lw.AgentOptions:
    tool = lw.Tool("act", "changes something", {"type": "object", "properties": {}}, lambda x: "acted")
    return lw.AgentOptions(model=lw.ScriptedModel(turns), tools=[tool], can_use_tool=can_use_tool,
                           permission_mode="default", cwd=tmp_path)


def test_can_use_tool_with_the_agent_sdk_signature(tmp_path: Path) -> None:
    seen: list[Any] = []

    async def decide(tool_name: str, tool_input: dict[str, Any], context: lw.ToolPermissionContext) -> Any:
        seen.append((tool_name, tool_input, context))
        return {"behavior": "allow", "updatedInput": tool_input}

    r = lw.run("go", gated([[use("1", "act", {"k": 1})], [text("ok")]], decide, tmp_path))
    assert r.subtype == "success" and r.messages[2]["content"][0] == {
        "type": "tool_result", "tool_use_id": "1", "content": "acted"}
    (name, data, ctx), = seen
    assert (name, data) == ("act", {"k": 1})
    assert isinstance(ctx, lw.ToolPermissionContext)
    assert (ctx.session_id, ctx.cwd, ctx.permission_mode) == (r.session_id, str(tmp_path.resolve()), "default")


@pytest.mark.parametrize(("callback", "says"), [
    (lambda name, x: "yes", "can_use_tool returned str 'yes' for act"),
    (lambda name, x, ctx: None, "can_use_tool returned NoneType"),
    (lambda name, x: 1 / 0, "can_use_tool raised ZeroDivisionError"),
], ids=["invalid-value", "none", "raises"])
def test_a_broken_can_use_tool_ends_the_run_saying_so(tmp_path: Path, callback: Any, says: str) -> None:
    r = lw.run("go", gated([[use("1", "act"), use("2", "act")], [text("ok")]], callback, tmp_path))
    assert r.subtype == "error_during_execution" and r.is_error
    assert len(r.errors) == 1 and says in r.errors[0] and says in (r.result or "")
    results = r.messages[2]["content"]
    assert [b["is_error"] for b in results] == [True, True]  # nothing ran; the history stays paired
    assert lw.AgentOptions().can_use_tool is None


# --- item 17: tool results as JSON, @tool signature checks ---------------------------------------

class Row(pydantic.BaseModel):
    name: str
    size: int


@dataclasses.dataclass
class Point:
    x: int
    y: float


PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


@pytest.mark.parametrize(("value", "expected"), [
    ([{"name": "a", "size": 1}, {"name": "b", "size": 2}], '[{"name": "a", "size": 1}, {"name": "b", "size": 2}]'),
    ([1, 2.5, 3], "[1, 2.5, 3]"),
    ([Row(name="a", size=1)], '[{"name": "a", "size": 1}]'),
    (Row(name="a", size=1), '{"name": "a", "size": 1}'),
    (Point(1, 2.5), '{"x": 1, "y": 2.5}'),
    ({"rows": [Row(name="z", size=0)], "at": Path("/x")}, '{"rows": [{"name": "z", "size": 0}], "at": "/x"}'),
    (42, "42"),
    (True, "true"),
    ([], "[]"),
], ids=["dicts", "numbers", "pydantic-list", "pydantic", "dataclass", "nested", "int", "bool", "empty"])
def test_tool_results_of_data_become_json_text(value: Any, expected: str) -> None:
    out = to_output(value)
    assert out.content == expected and not out.is_error


def test_bytes_become_an_image_block_or_base64_with_a_note() -> None:
    image = to_output(PNG).content
    assert isinstance(image, list) and [b.to_wire() for b in image] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": base64.b64encode(PNG).decode()}}]
    blob = to_output(b"\x00\x01binary")
    assert isinstance(blob.content, str) and "8 bytes of binary data, base64-encoded" in blob.content
    assert blob.content.endswith(base64.b64encode(b"\x00\x01binary").decode())
    # content blocks still pass as blocks
    blocks = to_output([{"type": "text", "text": "a"}, "b"]).content
    assert isinstance(blocks, list) and [b.to_wire() for b in blocks] == [text("a"), text("b")]


def test_what_reaches_the_model_is_json_not_repr(tmp_path: Path) -> None:
    @lw.tool
    def rows() -> list[Row]:
        """Rows."""
        return [Row(name="a", size=1)]

    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("1", "rows")], [text("ok")]]), tools=[rows]))
    assert r.messages[2]["content"][0]["content"] == '[{"name": "a", "size": 1}]'


def test_tool_decorator_rejects_signatures_it_cannot_call() -> None:
    def star(*args: int) -> str:
        return ""

    def kw(**kwargs: int) -> str:
        return ""

    def posonly(a: int, /) -> str:
        return ""

    for fn, says in ((star, r"\*args cannot be called"), (kw, r"\*\*kwargs gives the model no schema"),
                     (posonly, "positional-only")):
        with pytest.raises(TypeError, match=says):
            lw.tool(fn)
    with pytest.raises(TypeError, match="second parameter 'extra' is optional"):
        lw.Tool("t", "d", {"type": "object", "properties": {}}, lambda x, extra=None: "x")


def test_an_optional_tool_context_is_the_context_not_a_schema_field(tmp_path: Path) -> None:
    @lw.tool
    def where(name: str, ctx: lw.ToolContext | None = None) -> str:
        """Where am I."""
        assert ctx is not None
        return f"{name} in {ctx.cwd.name}"

    assert list(where.input_schema["properties"]) == ["name"]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("1", "where", {"name": "x"})], [text("ok")]]),
                                     tools=[where], cwd=tmp_path))
    assert r.messages[2]["content"][0]["content"] == f"x in {tmp_path.name}"


# --- item 19: arun, run inside a loop, typing -----------------------------------------------------

def test_arun_in_a_running_loop_and_run_there_is_a_clear_error() -> None:
    async def inside() -> lw.ResultMessage:
        with pytest.raises(RuntimeError, match=r"running event loop .*await lw.arun"):
            lw.run("hi", lw.AgentOptions(model=lw.ScriptedModel([[text("never")]])))
        return await lw.arun("hi", lw.AgentOptions(model=lw.ScriptedModel([[text("hello")]])))

    r = asyncio.run(inside())
    assert r.subtype == "success" and r.result == "hello"


@pytest.mark.e2e  # mypy in a subprocess
def test_public_names_type_check_under_mypy_strict(tmp_path: Path) -> None:
    user = tmp_path / "user.py"
    user.write_text(
        "import loopwright as lw\n"
        "from loopwright.hooks import HookJSONOutput, PreToolUseHookInput\n\n\n"
        "def guard(data: PreToolUseHookInput) -> HookJSONOutput:\n"
        "    return {'continue': data['tool_name'] != 'rm', 'hookSpecificOutput': {\n"
        "        'hookEventName': 'PreToolUse', 'permissionDecision': 'allow'}}\n\n\n"
        "@lw.tool\n"
        "def add(a: int, b: int) -> int:\n"
        '    """Add."""\n'
        "    return a + b\n\n\n"
        "async def main() -> str | None:\n"
        "    hooks = lw.Hooks()\n"
        "    hooks.on('PreToolUse', guard)\n"
        "    opts = lw.AgentOptions(model=lw.ScriptedModel([]), tools=[add, *lw.default_tools()], hooks=hooks,\n"
        "                           agents={'r': lw.AgentDefinition('d', 'p')})\n"
        "    t: lw.Tool = add\n"
        "    r: lw.ResultMessage = await lw.arun(t.name, opts)\n"
        "    return r.user_message_uuid\n")
    out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
                          str(user)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


# --- item 20: rewind with the uuid a message carries ----------------------------------------------

def test_rewind_files_with_the_result_s_user_message_uuid(tmp_path: Path) -> None:
    work, sessions = tmp_path / "work", tmp_path / "sessions"
    work.mkdir()
    made = work / "made.txt"
    turns = [[use("w1", "Write", {"file_path": str(made), "content": "new\n"})], [text("written")]]
    r = lw.run("make a file", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=lw.default_tools(), cwd=work,
                                              permission_mode="acceptEdits", persist_session=True,
                                              sessions_dir=sessions))
    assert r.subtype == "success" and made.read_text() == "new\n"
    assert r.user_message_uuid is not None
    report = lw.rewind_files(r.session_id, r.user_message_uuid, sessions_dir=sessions, cwd=work)
    assert not made.exists() and str(made) in report.deleted
    # the tool-result message carries its own transcript uuid
    assert lw.run("x", lw.AgentOptions(model=lw.ScriptedModel([[text("y")]]))).user_message_uuid is None


def test_user_messages_carry_their_transcript_uuid(tmp_path: Path) -> None:
    from loopwright.sessions import read_lines

    sessions = tmp_path / "s"
    opts = lw.AgentOptions(model=lw.ScriptedModel([[use("1", "noop")], [text("ok")]]), tools=[NOOP], cwd=tmp_path,
                           persist_session=True, sessions_dir=sessions)

    async def collect() -> list[lw.Message]:
        return [m async for m in lw.query("go", opts)]

    msgs = asyncio.run(collect())
    users = [m for m in msgs if isinstance(m, lw.UserMessage)]
    assert len(users) == 1 and users[0].uuid is not None
    lines = read_lines(next(sessions.rglob("*.jsonl")))
    line = next(ln for ln in lines if ln.get("uuid") == users[0].uuid)
    assert line["type"] == "user" and line["message"]["content"][0]["tool_use_id"] == "1"


def test_refusals_in_the_python_api_give_python_advice(tmp_path: Path) -> None:
    turns = [[use("1", "Bash", {"command": "touch made"})], [text("ok")]]
    r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=lw.default_tools(), cwd=tmp_path,
                                     permission_mode="default"))
    refusal = r.messages[2]["content"][0]
    assert refusal["is_error"] and not (tmp_path / "made").exists()
    assert "allowed_tools=['Bash(touch:*)']" in refusal["content"], refusal["content"]
    assert "permission_mode='bypassPermissions'" in refusal["content"]
    assert "--allowedTools" not in refusal["content"] and "--permission-mode" not in refusal["content"]
    # the CLI keeps its flags (tests/cli/test_e2e_cli.py checks what its model reads)
    cli = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=lw.default_tools(), cwd=tmp_path,
                                       permission_mode="default", refusal_advice="cli"))
    assert "--allowedTools 'Bash(touch:*)'" in cli.messages[2]["content"][0]["content"]


def test_system_messages_data_has_the_shape_of_its_typed_dict(tmp_path: Path) -> None:
    from loopwright.messages import CompactBoundaryData, CompactErrorData, HookReportData, InitData

    hooks = lw.Hooks()
    hooks.on("PostToolUse", lambda data: {"systemMessage": "noted"})
    # the summaries are the 2nd and 5th calls: compaction runs before each call after a tool turn
    turns = [[use("1", "noop")], [text("SUMMARY so far")], [use("2", "noop")], [text("SUMMARY again")],
             [text("done")]]
    msgs = asyncio.run(_collect("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=[NOOP], hooks=hooks,
                                                      cwd=tmp_path, context_window=40, compact_threshold=0.5)))
    kinds = {"init": InitData, "compact_boundary": CompactBoundaryData, "compact_error": CompactErrorData,
             "hook_message": HookReportData, "hook_error": HookReportData}
    system = [m for m in msgs if isinstance(m, lw.SystemMessage)]
    assert [m.subtype for m in system] == ["init", "hook_message", "compact_boundary", "hook_message",
                                           "compact_boundary"]
    assert msgs[-1].subtype == "success"  # type: ignore[union-attr]
    for m in system:
        td = kinds[m.subtype]
        assert td.__required_keys__ <= set(m.data) <= td.__required_keys__ | td.__optional_keys__, (m.subtype, m.data)


async def _collect(prompt: str, options: lw.AgentOptions) -> list[lw.Message]:
    return [m async for m in lw.query(prompt, options)]


def test_a_handlers_shape_read_from_its_code_is_what_inspect_signature_gives() -> None:
    """Tool reads a plain function's parameters from its code (every tool is made at every
    start); anything else (a wrapped function, a partial, a method, a callable object) goes to
    inspect.signature. Both must say the same."""
    import functools
    import inspect

    from loopwright.tools import base

    def by_inspect(fn: Any) -> Any:
        ps = list(inspect.signature(fn).parameters.values())
        return ([(p.name, p.default is not p.empty) for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)],
                [p.name for p in ps if p.kind == p.KEYWORD_ONLY and p.default is p.empty])

    def wrapped(x: Any, ctx: Any, z: int = 1) -> None: ...

    @functools.wraps(wrapped)
    def wrapper(*a: Any, **k: Any) -> None: ...

    class Callable_:
        def __call__(self, x: Any, ctx: Any = None) -> None: ...

        def method(self, x: Any, *, flag: bool) -> None: ...

    shapes: list[Any] = [
        lambda: None, lambda x: None, lambda x, ctx: None, lambda x, ctx=None: None, lambda x, y, z=1, w=2: None,
        lambda x, /, ctx: None, lambda x, *args: None, lambda x, *, k: None, lambda x, *, k=1: None,
        lambda x, ctx, *args, k, m=2, **kw: None, lambda x=1, y=2: None, wrapper, Callable_(), Callable_().method,
        functools.partial(lambda a, x, ctx: None, 1),
    ]
    class Partial:
        def m(self, x: Any, ctx: Any, y: int) -> None: ...

        pm = functools.partialmethod(m, y=1)

    shapes.append(Partial.pm.__get__(None, Partial))  # a function whose signature is the partialmethod's
    for fn in shapes:
        assert base._shape(fn) == by_inspect(fn), fn
    assert base._shape(len) == by_inspect(len)  # a builtin with a text signature
    assert base._shape(dict.fromkeys) is not None
