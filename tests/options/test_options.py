"""AgentOptions (options.py) refuses a bad argument at construction (issue 9 item 14): the message
names the field and the fix, as the Python API's users need (moved from
tests/assemble/test_api_contract.py, which keeps run()'s own argument checks)."""

from __future__ import annotations

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
