"""The rooms import one way (issue 10 item 1): no import circle inside the package.

Every import of a package module, at module or function level, is an edge (imports under
`if TYPE_CHECKING:` are not: they never run); a strongly connected component of more than
one module is a circle."""

from __future__ import annotations

import ast
from pathlib import Path

import loopwright

PKG = Path(loopwright.__file__).parent


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        parts = ["loopwright", *p.relative_to(PKG).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def _edges(mods: dict[str, Path]) -> dict[str, set[str]]:
    def known(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        tree = ast.parse(path.read_text())
        skipped = {id(n) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                   for n in ast.walk(node)}
        package = m if path.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            names: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - max(node.level - 1, 0)] if node.level else []
                module = ".".join([*base, *([node.module] if node.module else [])])
                names = [module, *(f"{module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for n in names:
                target = known(n) if n.split(".")[0] == "loopwright" else None
                # a submodule importing the package itself is not an edge (`import loopwright` is lazy)
                if target and target != m and target != "loopwright":
                    edges[m].add(target)
    return edges


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
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

    for v in edges:
        if v not in index:
            visit(v)
    return out


def test_the_checker_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circle_outside_the_cli() -> None:
    edges = _edges(_modules())
    assert "loopwright.agents" in edges["loopwright.loop"]  # the loop adds the Agent tool: agents sits below
    core = {m: {t for t in ts if not t.startswith("loopwright.cli")} for m, ts in edges.items()
            if not m.startswith("loopwright.cli")}
    assert _circles(core) == []


def test_no_import_circle_in_the_package() -> None:
    assert _circles(_edges(_modules())) == []
