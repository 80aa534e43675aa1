"""AgentOptions (options.py) refuses a bad argument at construction (issue 9 item 14): the message
names the field and the fix, as the Python API's users need (moved from
tests/assemble/test_api_contract.py, which keeps run()'s own argument checks)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import loopwright as lw

NOOP = lw.Tool("noop", "does nothing", {"type": "object", "properties": {}}, lambda x: "ok")


def _hook(data: dict[str, Any]) -> None:
    return None


BAD_OPTIONS: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"allowed_tools": "Bash"}, TypeError, r"allowed_tools must be a list .*allowed_tools=\['Bash'\]"),
    ({"allowed_tools": "Read,Bash(git diff *)"}, TypeError, r"allowed_tools=\['Read', 'Bash\(git diff \*\)'\]"),
    ({"disallowed_tools": "Bash(rm *)"}, TypeError, r"disallowed_tools=\['Bash\(rm \*\)'\]"),
    ({"disallowed_tools": [1]}, TypeError, "disallowed_tools must hold rule strings"),
    ({"tools": NOOP}, TypeError, r"tools must be a list .*tools=\[noop\]"),
    # built-in tools may be named (the Agent SDK's tools=["Read", ...]); an unknown name is refused
    ({"tools": ["Read", "Teleport"]}, ValueError, r"'Teleport' is not a built-in tool.*allowed_tools"),
    ({"hooks": {"PreToolUse": _hook}}, TypeError, r"hooks\['PreToolUse'\] must be a list of HookMatcher"),
    ({"max_budget_usd": "1"}, TypeError, "max_budget_usd must be a number"),
    ({"model": 123}, TypeError, "model must be a model string"),
    ({"model": "gpt-4o"}, ValueError, r"model='gpt-4o' names no provider: write model='openai:gpt-4o'"),
    ({"model": "mistral:large"}, ValueError, "unknown model provider 'mistral'"),
    ({"permission_mode": "yolo"}, ValueError, "permission_mode must be one of"),
    ({"add_dirs": "/tmp"}, TypeError, r"add_dirs=\['/tmp'\]"),
    ({"setting_sources": "project"}, TypeError, r"setting_sources=\['project'\]"),
]


@pytest.mark.parametrize(("kw", "error", "match"), BAD_OPTIONS, ids=[next(iter(k)) + "-" + str(i)
                                                                    for i, (k, _, _) in enumerate(BAD_OPTIONS)])
def test_bad_options_fail_at_construction_naming_the_field_and_fix(kw: dict[str, Any], error: type[Exception],
                                                                    match: str) -> None:
    with pytest.raises(error, match=match):
        lw.AgentOptions(**kw)


def test_a_rule_naming_no_tool_is_named_in_the_runs_warnings() -> None:
    """allowed_tools=["Bsh"] (a typo of Bash) matched nothing without a word, where the CLI's flags and a
    settings file say so: the run names each such rule, with the tool it looks like, in the init
    message's warnings (and to the stderr callback), as it names a settings file's; rules naming a
    tool of the run, Claude Code's, an MCP server's or a wildcard are not named."""
    said: list[str] = []
    model = lw.ScriptedModel([[{"type": "text", "text": "ok"}]])
    opts = lw.AgentOptions(model=model, tools=[NOOP], allowed_tools=["Bsh", "nop", "noop", "Read", "mcp__fs__read"],
                           disallowed_tools=["Wirte(/etc/**)", "Zzqx", "Task", "mcp__fs__*"], stderr=said.append)

    async def messages() -> list[lw.Message]:
        return [m async for m in lw.query("go", opts)]

    got = asyncio.run(messages())
    assert isinstance(got[-1], lw.ResultMessage) and got[-1].subtype == "success", got[-1]
    [init] = [m for m in got if isinstance(m, lw.SystemMessage) and m.subtype == "init"]
    expected = ["allowed_tools Bsh: no tool is named Bsh (did you mean Bash?); the rule matches nothing",
                "allowed_tools nop: no tool is named nop (did you mean noop?); the rule matches nothing",
                "disallowed_tools Wirte(/etc/**): no tool is named Wirte (did you mean Write?); the rule matches nothing",
                "disallowed_tools Zzqx: no tool is named Zzqx; the rule matches nothing"]
    assert [w for w in init.data.get("warnings", []) if "no tool" in w] == expected, init.data
    assert [ln.removeprefix("warning: ") for ln in said if "no tool is named" in ln] == expected, said
