"""Project memory (memory.py): which files, in which order, sent once in the first user message
(checked in the requests the loopback server saw, through the real CLI), `@` imports, nested
directories, and what bad memory files get."""

from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.memory import imports, load_memory
from loopwright.testing import ScriptedServer
from tests.helpers import loopwright_cmd, text, use


def make_repo(tmp: Path) -> tuple[Path, Path]:
    repo = tmp / "repo"
    sub = repo / "pkg"
    (repo / ".git").mkdir(parents=True)
    sub.mkdir()
    (repo / "AGENTS.md").write_text("ROOT-AGENTS: run `make test`.\n@docs/style.md\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "style.md").write_text("STYLE: four spaces.\n@../AGENTS.md\n")  # a cycle: read once
    (repo / "CLAUDE.md").write_text("ROOT-CLAUDE\n```\n@not/an/import.md\n```\nsee `@also/not.md`\n@missing.md\n")
    (sub / "LOOPWRIGHT.md").write_text("PKG-LOOPWRIGHT\n")
    (sub / "CLAUDE.local.md").write_text("PKG-LOCAL\n")
    return repo, sub


def test_files_in_order_with_imports_and_warnings(tmp_path: Path) -> None:
    repo, sub = make_repo(tmp_path)
    home = tmp_path / "lwhome"
    home.mkdir()
    (home / "AGENTS.md").write_text("USER-AGENTS\n")
    mem = load_memory(sub, ["user", "project", "local"], home=home)
    names = [(f.path.relative_to(tmp_path).as_posix(), f.scope) for f in mem.files]
    assert names == [("lwhome/AGENTS.md", "user"), ("repo/AGENTS.md", "project"), ("repo/docs/style.md", "import"),
                     ("repo/CLAUDE.md", "project"), ("repo/pkg/LOOPWRIGHT.md", "project"),
                     ("repo/pkg/CLAUDE.local.md", "local")]
    assert len(mem.warnings) == 1 and "@missing.md not found" in mem.warnings[0] and "CLAUDE.md" in mem.warnings[0]
    assert [f.path.name for f in load_memory(sub, ["project"], home=home).files] == [
        "AGENTS.md", "style.md", "CLAUDE.md", "LOOPWRIGHT.md"]
    assert load_memory(sub, [], home=home).files == []


def test_imports_skip_code_and_mentions() -> None:
    assert imports("see @a.md and @~/x/y.md\n`@b.md`\n```\n@c.md\n```\nmail me@host.com, ping @alice\n") == [
        "a.md", "~/x/y.md"]


def test_import_depth_directory_and_binary(tmp_path: Path) -> None:
    for i in range(7):
        (tmp_path / f"m{i}.md").write_text(f"M{i}\n@m{i + 1}.md\n")
    (tmp_path / "AGENTS.md").write_text("@m0.md\n@adir/\n@bin.md\n")
    (tmp_path / "adir").mkdir()
    (tmp_path / "bin.md").write_bytes(b"\x00\x01binary")
    mem = load_memory(tmp_path, ["project"], home=tmp_path / "none")
    got = [f.path.name for f in mem.files]
    assert got == ["AGENTS.md", "m0.md", "m1.md", "m2.md", "m3.md", "m4.md"]  # 5 imports deep
    joined = "\n".join(mem.warnings)
    assert "at most 5 deep" in joined and "adir/ is a directory" in joined and "bin.md: a binary file" in joined


@pytest.mark.e2e
def test_sent_once_in_the_first_user_message_through_the_cli(tmp_path: Path) -> None:
    repo, sub = make_repo(tmp_path)
    turns = [[use("r1", "Read", file_path=str(repo / "AGENTS.md"))], [text("done")]]
    with ScriptedServer(turns) as srv:
        env = {**os.environ, "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "test"}
        r = subprocess.run([*loopwright_cmd(), "-p", "hello", "--model", "claude-sonnet-4-5", "--allowedTools", "Read",
                            "--output-format", "json"], cwd=sub, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert "@missing.md not found" in r.stderr
        reqs = srv.loop_requests
        assert len(reqs) == 2
        for req in reqs:
            first = req.body["messages"][0]["content"]
            assert first[-1]["text"] == "hello"
            body = first[0]["text"]
            order = [body.index(k) for k in ("ROOT-AGENTS", "STYLE", "ROOT-CLAUDE", "PKG-LOOPWRIGHT", "PKG-LOCAL")]
            assert order == sorted(order)
            assert body.count("ROOT-AGENTS") == 1
            system = json.dumps(req.body.get("system"))
            assert "ROOT-AGENTS" not in system, "the system prompt stays byte-stable"
        assert reqs[0].body.get("system") == reqs[1].body.get("system")
        assert sum(json.dumps(m).count("ROOT-CLAUDE") for m in reqs[1].body["messages"]) == 1, "sent once"
        # --bare: none
        r = subprocess.run([*loopwright_cmd(), "-p", "hello", "--bare", "--model", "claude-sonnet-4-5", "--output-format", "json"],
                           cwd=sub, env=env, capture_output=True, text=True, timeout=120)
        assert "ROOT-AGENTS" not in json.dumps(srv.loop_requests[-1].body["messages"])


def test_the_library_reads_none_unless_asked(tmp_path: Path) -> None:
    repo, sub = make_repo(tmp_path)
    seen: list[list[dict[str, Any]]] = []

    def model(h: list[dict[str, Any]]) -> Any:
        seen.append(h)
        return [text("ok")]

    lw.run("hi", lw.AgentOptions(model=lw.ScriptedModel(model), cwd=sub))
    assert "ROOT-AGENTS" not in json.dumps(seen[-1])
    lw.run("hi", lw.AgentOptions(model=lw.ScriptedModel(model), cwd=sub, setting_sources=["project"]))
    assert "ROOT-AGENTS" in json.dumps(seen[-1]) and "PKG-LOCAL" not in json.dumps(seen[-1])
    lw.run("hi", lw.AgentOptions(model=lw.ScriptedModel(model), cwd=sub, setting_sources=["project"], memory=False))
    assert "ROOT-AGENTS" not in json.dumps(seen[-1])


def test_nested_directory_memory_is_read_when_a_tool_first_touches_it(tmp_path: Path) -> None:
    repo, _ = make_repo(tmp_path)
    (repo / "pkg" / "mod.py").write_text("x = 1\n")
    seen: list[list[dict[str, Any]]] = []
    turns = iter([[use("r1", "Read", file_path="pkg/mod.py")], [use("r2", "Read", file_path="pkg/mod.py")],
                  [text("done")]])

    def model(h: list[dict[str, Any]]) -> Any:
        seen.append(copy.deepcopy(h))  # the loop's h grows in place
        return next(turns)

    from loopwright.tools.builtin import default_tools

    r = lw.run("look", lw.AgentOptions(model=lw.ScriptedModel(model), cwd=repo, tools=default_tools(),
                                       setting_sources=["project", "local"]))
    assert r.subtype == "success"
    first = json.dumps(seen[0])
    assert "ROOT-AGENTS" in first and "PKG-LOOPWRIGHT" not in first  # below cwd: not yet
    after_read = seen[1][-1]["content"]
    assert after_read[0]["type"] == "tool_result" and "PKG-LOOPWRIGHT" in after_read[1]["text"]
    assert "PKG-LOCAL" in after_read[1]["text"]
    assert json.dumps(seen[2]).count("PKG-LOOPWRIGHT") == 1, "read the first time only"


def test_repl_memory_and_init(tmp_path: Path, capsys: Any) -> None:
    import asyncio

    from loopwright.cli.interactive import Repl

    repo, sub = make_repo(tmp_path)
    repl = Repl(lw.AgentOptions(model=lw.ScriptedModel([]), cwd=sub, setting_sources=["project", "local"]))

    async def go() -> None:
        assert await repl.command("/memory")
        out = capsys.readouterr().out
        assert "repo/AGENTS.md" in out and "pkg/CLAUDE.local.md" in out and "@missing.md not found" in out
        assert await repl.command("/init --template")
        assert "wrote" in capsys.readouterr().out
        assert (sub / "AGENTS.md").read_text().startswith("# AGENTS.md")
        (sub / "AGENTS.md").write_text("mine\n")
        assert await repl.command("/init --template")
        assert "already exists" in capsys.readouterr().out and (sub / "AGENTS.md").read_text() == "mine\n"

    asyncio.run(go())
