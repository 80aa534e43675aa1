"""The rooms as a test (issues 10 and 23): every module names its room in its docstring's first line, docs/architecture.md's
architecture map lists every module in that room, no import goes up the map and none closes a
circle. Every import counts: at module level, inside functions and under `if TYPE_CHECKING:`
(a type that names a higher room is a dependency on it too)."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "loopwright"
ROOM_RE = re.compile(r"^Room: ([^.(]+?)\s*[.(]")


@functools.cache
def modules() -> dict[str, Path]:
    """Dotted name (without the `loopwright.` prefix; the package itself is `loopwright`) -> file.
    The demo project is data the demo's agent edits, not loopwright's code."""
    out: dict[str, Path] = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).with_suffix("")
        parts = list(rel.parts)
        if parts[0] == "demo_project":
            continue
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts) or "loopwright"] = path
    return out


def imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the package modules it imports, anywhere in it."""
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        is_pkg = path.name == "__init__.py"
        here = [] if m == "loopwright" else m.split(".")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here if is_pkg else here[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    prefix = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    if not (node.module or "").startswith("loopwright"):
                        continue
                    prefix = (node.module or "").removeprefix("loopwright").lstrip(".")
                names = [prefix, *(f"{prefix}.{a.name}".lstrip(".") for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name.removeprefix("loopwright").lstrip(".") for a in node.names
                         if a.name == "loopwright" or a.name.startswith("loopwright.")]
            for n in names:  # the module a name is in ("": the package itself, not counted)
                while n and n not in mods:
                    n = n.rpartition(".")[0]
                if n and n != m:
                    edges[m].add(n)
    return edges


def readme_map() -> list[tuple[list[str], list[str]]]:
    """docs/architecture.md's map, top to bottom: (rooms of one level, their modules)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("<!-- rooms:", 1)[1].split("<!-- rooms end -->", 1)[0]
    body = block.split("```text\n", 1)[1].split("```", 1)[0]
    levels: list[tuple[list[str], list[str]]] = []
    for line in body.splitlines():
        if not line.strip():
            continue
        if line.startswith(" "):  # a continuation of the level above
            levels[-1][1].extend(line.split())
            continue
        rooms, _, mods = line.partition(":")
        levels.append(([r.strip() for r in rooms.split(",")], mods.split()))
    return levels


def room_of(path: Path) -> str | None:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    m = ROOM_RE.match(doc.splitlines()[0] if doc else "")
    return m.group(1) if m else None


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_every_module_names_its_room_as_the_readme_map_places_it() -> None:
    mods = modules()
    placed: dict[str, list[str]] = {}
    for rooms, listed in readme_map():
        for m in listed:
            placed.setdefault(m, []).extend(rooms)
    missing = sorted(set(mods) - set(placed))
    unknown = sorted(set(placed) - set(mods))
    assert not missing, f"modules docs/architecture.md's map does not list: {missing}"
    assert not unknown, f"docs/architecture.md's map lists modules that do not exist: {unknown}"
    wrong = {m: (room_of(p), placed[m]) for m, p in mods.items() if room_of(p) not in placed[m]}
    assert not wrong, "docstring room vs the architecture map's level: " + "; ".join(
        f"{m}: {got!r} not in {want}" for m, (got, want) in sorted(wrong.items()))


@functools.cache
def package_imports() -> dict[str, set[str]]:
    return imports(modules())


def test_no_import_goes_up_the_map() -> None:
    level = {m: i for i, (_, listed) in enumerate(readme_map()) for m in listed}  # 0: the top
    edges = package_imports()
    upward = sorted(f"{m} -> {t}" for m, ts in edges.items() for t in ts if level[t] < level[m])
    assert upward == [], f"{len(upward)} upward imports: {upward}"


def test_no_import_circles() -> None:
    edges = package_imports()
    assert "agents" in edges["assemble"]  # the assembler adds the Agent tool: agents sits below it
    found = circles(edges)
    assert found == [], f"{len(found)} import circles: {found}"


def test_the_checker_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("source, expect", [
    # the checks themselves: a circle through a TYPE_CHECKING import and one inside a function
    ({"a": "from . import b\n", "b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"},
     [["a", "b"]]),
    ({"a": "def f():\n    from .b import x\n", "b": "from .a import y\n"}, [["a", "b"]]),
    ({"a": "from . import b\n", "b": "import os\n"}, []),
])
def test_the_circle_check_counts_every_kind_of_import(tmp_path: Path, source: dict[str, str],
                                                      expect: list[list[str]]) -> None:
    for name, text in source.items():
        (tmp_path / f"{name}.py").write_text(text)
    mods = {name: tmp_path / f"{name}.py" for name in source}
    assert circles(imports(mods)) == expect
