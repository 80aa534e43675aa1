"""`tests/` mirrors the rooms (issue 41): docs/architecture.md's "Where the tests live" table has one
row per room of the architecture map; every package of src/loopwright has the test folder of its
name in its room's row; every folder a row names holds tests; and every folder of `tests/` is named
by a row or is one of the whole-tree folders below. A new package without tests, a new room without
a row, or a stray test folder fails here, naming it."""

from __future__ import annotations

import re
from pathlib import Path

from tests.project.test_layering import ROOT, SRC, readme_map, room_of

TESTS = ROOT / "tests"

# Folders of tests/ that mirror no room, each with the reason it stands apart.
WHOLE_TREE: dict[str, str] = {
    "project": "checks of the whole tree (layering, this mirror, the plain install, start-up imports, docs, bench)",
    "fixtures": "data files the tests read (Claude Code's --help, its settings keys, its transcripts)",
    "node": "the npm interop peers (Claude Code, the Agent SDKs, acpx, MCP's conformance suite) and their scripts",
    "llama": "the build of llama-server for tests/models/test_llama_server.py",
}

FOLDER_RE = re.compile(r"`tests/([^`/]+)/`")


def read_tests_table(text: str) -> dict[str, list[str]]:
    """The "Where the tests live" table: room -> the test folders its row names, in order."""
    block = text.split("<!-- tests:", 1)[1].split("<!-- tests end -->", 1)[0]
    table: dict[str, list[str]] = {}
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 2 or cells[0] == "Room" or set(cells[0]) <= {"-"}:
            continue
        assert cells[0] not in table, f"two rows for the room {cells[0]!r}"
        table[cells[0]] = FOLDER_RE.findall(cells[1])
    return table


def packages(src: Path) -> dict[str, Path]:
    """Top-level package name -> its __init__.py (the demo project is data, not loopwright's code)."""
    return {p.parent.name: p for p in sorted(src.glob("*/__init__.py")) if p.parent.name != "demo_project"}


def folders(tests: Path) -> set[str]:
    """The folders of tests/ that hold anything besides bytecode caches."""
    return {d.name for d in tests.iterdir()
            if d.is_dir() and any(f.is_file() and "__pycache__" not in f.parts for f in d.rglob("*"))}


def mirror_problems(src: Path, tests: Path, rooms: list[str], table: dict[str, list[str]],
                    whole_tree: dict[str, str]) -> list[str]:
    """Each way `tests/` fails to mirror the rooms, as one line; none when it does."""
    problems = [f"room {r!r} has no row in the tests table" for r in rooms if r not in table]
    problems += [f"the tests table's row {r!r} is no room of the map" for r in table if r not in rooms]
    problems += [f"the row {r!r} names no test folder" for r, fs in table.items() if not fs]
    for name, init in packages(src).items():
        room = room_of(init)
        if name not in table.get(room or "", []):
            problems.append(f"package {name}/ (room {room!r}): its room's row does not name tests/{name}/")
    named = {f for fs in table.values() for f in fs}
    for f in sorted(named):
        if not any((tests / f).glob("test_*.py")):
            problems.append(f"tests/{f}/ is named in the table but holds no test_*.py")
    problems += [f"tests/{f}/ is both a room's folder and a whole-tree folder" for f in sorted(named & set(whole_tree))]
    problems += [f"tests/{f}/ mirrors no room: name it in docs/architecture.md's tests table (or move its tests)"
                 for f in sorted(folders(tests) - named - set(whole_tree))]
    return problems


def map_rooms() -> list[str]:
    return [r for rooms, _ in readme_map() for r in rooms]


def test_tests_mirror_the_rooms() -> None:
    table = read_tests_table((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    problems = mirror_problems(SRC, TESTS, map_rooms(), table, WHOLE_TREE)
    assert problems == [], "tests/ does not mirror the rooms:\n" + "\n".join(problems)


def test_every_whole_tree_folder_exists() -> None:
    assert sorted(f for f in WHOLE_TREE if not (TESTS / f).is_dir()) == []


def _write(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_the_check_finds_a_new_package_a_new_room_and_a_stray_folder(tmp_path: Path) -> None:
    src, tests = tmp_path / "src", tmp_path / "tests"
    _write(src / "a.py", '"""Room: alpha. Owns a."""\n')
    _write(src / "pkg" / "__init__.py", '"""Room: alpha. Owns pkg."""\n')
    _write(tests / "alpha" / "test_a.py")
    _write(tests / "pkg" / "test_pkg.py")
    _write(tests / "project" / "test_x.py")
    _write(tests / "cached" / "__pycache__" / "test_old.cpython-311.pyc")  # bytecode left behind: no folder
    table = {"alpha": ["alpha", "pkg"]}
    whole = {"project": "whole tree"}
    assert mirror_problems(src, tests, ["alpha"], table, whole) == []

    _write(src / "newpkg" / "__init__.py", '"""Room: alpha. Owns newpkg."""\n')
    assert mirror_problems(src, tests, ["alpha"], table, whole) == [
        "package newpkg/ (room 'alpha'): its room's row does not name tests/newpkg/"]
    (src / "newpkg" / "__init__.py").unlink()

    _write(tests / "stray" / "test_s.py")
    assert mirror_problems(src, tests, ["alpha"], table, whole) == [
        "tests/stray/ mirrors no room: name it in docs/architecture.md's tests table (or move its tests)"]
    (tests / "stray" / "test_s.py").unlink()

    assert mirror_problems(src, tests, ["alpha", "beta"], {**table, "gamma": ["alpha"]}, whole) == [
        "room 'beta' has no row in the tests table", "the tests table's row 'gamma' is no room of the map"]
    (tests / "pkg" / "test_pkg.py").unlink()
    _write(tests / "pkg" / "helpers.py")
    assert mirror_problems(src, tests, ["alpha"], table, whole) == [
        "tests/pkg/ is named in the table but holds no test_*.py"]


def test_the_table_is_read_row_by_row() -> None:
    text = ("<!-- tests: x -->\n| Room | Tests | What |\n|---|---|---|\n"
            "| a / b | `tests/a/`, `tests/b/` | both |\n| c | `tests/c/` | `tests/c/` again in prose |\n"
            "<!-- tests end -->\n| d | `tests/d/` | outside |\n")
    assert read_tests_table(text) == {"a / b": ["a", "b"], "c": ["c"]}
