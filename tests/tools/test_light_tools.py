"""The built-in tool set is cheap to build (issue 29 item 3): `default_tools()` and everything the
first model request needs of it (the definitions, the gate's flags) import only the tools'
definitions; each implementation module is imported by its handler at the tool's first call."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.project.test_startup_imports import modules_of_one_call, modules_of_sdk_call

SRC = Path(__file__).resolve().parents[2] / "src" / "loopwright"
# What building the tool set may load of loopwright.tools: the definitions and the base (Tool, what
# a call returns, its input check).
LIGHT = {"loopwright.tools", "loopwright.tools.base", "loopwright.tools.output", "loopwright.tools.schema",
         "loopwright.tools.builtin", "loopwright.tools.grep", "loopwright.tools.web"}


def _file(module: str) -> Path:
    rel = Path(*module.split(".")[1:])
    return SRC / rel / "__init__.py" if (SRC / rel).is_dir() else SRC / rel.with_suffix(".py")


def _executed(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements that run when a module is imported: all but function bodies and what sits
    under `if TYPE_CHECKING:` (class bodies, `try` and other `if`s run)."""
    out: list[ast.stmt] = []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        out.append(node)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.extend(_executed(node.orelse))
            continue
        for name in ("body", "orelse", "finalbody", "handlers"):
            out.extend(_executed(getattr(node, name, [])))
    return out


def _module_level_imports(module: str) -> set[str]:
    """The loopwright.tools.* modules `module` imports when it is imported (not those its functions
    import when called, nor under `if TYPE_CHECKING:`), and the packages they pass through."""
    path = _file(module)
    here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    out: set[str] = set()
    for node in _executed(ast.parse(path.read_text(encoding="utf-8")).body):
        if isinstance(node, ast.ImportFrom):
            base = here[: len(here) - (node.level - 1)] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            names = [target, *(f"{target}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for n in names:
            parts = n.split(".")
            for i in range(2, len(parts) + 1):  # importing a.b.c runs a.b first
                m = ".".join(parts[:i])
                if m.startswith("loopwright.tools") and (_file(m).exists()):
                    out.add(m)
    return out


def test_the_definitions_import_no_implementation_at_module_level() -> None:
    seen: set[str] = set()
    todo = ["loopwright.tools.builtin"]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(_module_level_imports(m))
    assert seen <= LIGHT, f"building the tool set imports {sorted(seen - LIGHT)}"


def test_the_checker_sees_an_implementation_import() -> None:
    # the check above can fail: tools.read imports tools.media and tools.paths at its top
    assert {"loopwright.tools.media", "loopwright.tools.paths"} <= _module_level_imports("loopwright.tools.read")
    assert "loopwright.tools.grep.engine" in _module_level_imports("loopwright.tools.grep.isolate")
    # and skips only what does not run at import: a handler's import, a TYPE_CHECKING one
    assert "loopwright.tools.read" not in _module_level_imports("loopwright.tools.builtin")
    assert "loopwright.tools.web.fetch" not in _module_level_imports("loopwright.tools.web")


BUILD = """
import json, sys
from pathlib import Path
from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import default_tools
from loopwright.workspace import ToolState
tools = default_tools()
defs = [t.definition() for t in tools]
flags = {t.name: [t.read_only, t.needs_approval] for t in tools}
built = sorted(m for m in sys.modules if m.startswith("loopwright.tools"))
read = {t.name: t for t in tools}["Read"]
out = read.call({"file_path": sys.argv[1]}, ToolContext(Path(sys.argv[1]).parent, state=ToolState()))
import asyncio
out = asyncio.run(out)
print(json.dumps([built, len(defs), flags, out.is_error, "loopwright.tools.read" in sys.modules]))
"""


@pytest.mark.e2e
def test_building_the_tool_set_loads_only_definitions_and_a_call_loads_its_implementation(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("hello\n")
    p = subprocess.run([sys.executable, "-c", BUILD, str(f)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    built, n, flags, is_error, read_loaded = json.loads(p.stdout)
    assert n == 19 and flags["Read"] == [True, True] and flags["Bash"] == [False, True]  # (with the 4 Task tools)
    assert flags["TodoWrite"] == [True, False] and flags["KillShell"] == [False, False]
    assert set(built) <= LIGHT, f"default_tools() imported {sorted(set(built) - LIGHT)}"
    assert not is_error and read_loaded  # the first call imported Read's implementation


def _tools_loaded(loaded: set[str]) -> list[str]:
    return sorted(m for m in loaded if m.startswith("loopwright.tools") and m not in LIGHT)


@pytest.mark.e2e
def test_print_mode_reaches_the_first_request_with_only_the_definitions(tmp_path: Path) -> None:
    loaded, requests = modules_of_one_call("anthropic", tmp_path)
    assert requests == 1 and "loopwright.tools.builtin" in loaded
    assert _tools_loaded(loaded) == []


@pytest.mark.e2e
def test_the_sdk_protocol_reaches_the_first_request_with_only_the_definitions(tmp_path: Path) -> None:
    loaded, requests = modules_of_sdk_call(tmp_path)
    assert requests == 1 and "loopwright.tools.builtin" in loaded
    assert _tools_loaded(loaded) == []
