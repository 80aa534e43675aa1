"""`@file` mentions in prompts (mentions.py): included as Read shows them, gated as Reads by the
run's own gate; the CLI's -p and its completion."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

import loopwright as lw
from loopwright.cli.mention_complete import mention_candidates, mention_completer
from loopwright.mentions import find_mentions
from tests.helpers import Recording, cli_env, loopwright_cmd, text, use, write_script


@pytest.fixture
def work(tmp_path: Path) -> Path:
    w = tmp_path / "work"
    (w / "src").mkdir(parents=True)
    (w / "src" / "app.py").write_text("def main():\n    return 1\n")
    (w / "notes with space.md").write_text("spaced\n")
    (w / "secret.txt").write_text("hunter2\n")
    return w


def _first_message(rec: Recording) -> list[dict[str, Any]]:
    return rec.seen[0][0]["content"]


def _run(work: Path, prompt: str, replies: list[Any], **kw: Any) -> tuple[lw.ResultMessage, Recording]:
    rec = Recording(replies)
    r = lw.run(prompt, lw.AgentOptions(model=lw.ScriptedModel(rec), tools=lw.default_tools(), cwd=work,
                                       file_mentions=True, **kw))
    return r, rec


def test_find_mentions(work: Path) -> None:
    got = find_mentions('see @src/app.py, and @"notes with space.md". mail bob@src/app.py or @nope.txt '
                        "(@src/app.py) @secret.txt.", work)
    assert [w for w, _ in got] == ["@src/app.py", '@"notes with space.md"', "@secret.txt"]
    assert got[0][1] == work / "src" / "app.py"


def test_a_mentioned_file_is_in_the_prompt_and_counts_as_read(work: Path) -> None:
    f = work / "src" / "app.py"
    r, rec = _run(work, "fix @src/app.py", [
        [use("e1", "Edit", file_path=str(f), old_string="return 1", new_string="return 2")], [text("done")]],
        permission_mode="acceptEdits")
    blocks = _first_message(rec)
    assert blocks[0] == {"type": "text", "text": "fix @src/app.py"}
    assert blocks[1]["text"] == (f'<file path="{f}" mentioned-as="@src/app.py">\n'
                                 "     1\tdef main():\n     2\t    return 1\n</file>")
    assert r.subtype == "success" and f.read_text() == "def main():\n    return 2\n"  # no Read needed first


def test_a_denied_mention_is_left_out_and_listed(work: Path) -> None:
    r, rec = _run(work, "look at @secret.txt and @src/app.py", [[text("ok")]],
                  permission_mode="default", disallowed_tools=["Read(./secret.txt)"])
    blocks = _first_message(rec)
    joined = json.dumps(blocks)
    assert "hunter2" not in joined and "return 1" in joined
    assert "@secret.txt was not included: Permission denied" in joined
    assert [d["tool_input"]["file_path"] for d in r.permission_denials] == [str(work / "secret.txt")]


def test_outside_the_workspace_the_gate_asks(work: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere.txt"
    other.write_text("far away\n")
    r, rec = _run(work, f"read @{other}", [[text("ok")]], permission_mode="default")
    assert "far away" not in json.dumps(_first_message(rec)) and len(r.permission_denials) == 1  # headless: no one to ask
    asked: list[tuple[str, dict[str, Any]]] = []

    def can_use(name: str, x: dict[str, Any]) -> bool:
        asked.append((name, x))
        return True

    r, rec = _run(work, f"read @{other}", [[text("ok")]], permission_mode="default", can_use_tool=can_use)
    assert asked == [("Read", {"file_path": str(other)})] and "far away" in json.dumps(_first_message(rec))


def test_an_image_mention_is_an_image_block(work: Path) -> None:
    Image.new("RGB", (10, 10), (0, 0, 255)).save(work / "shot.png")
    _, rec = _run(work, "what is in @shot.png?", [[text("blue")]])
    kinds = [b["type"] for b in _first_message(rec)]
    assert kinds == ["text", "text", "image", "text"]


def test_without_the_option_nothing_is_expanded(work: Path) -> None:
    rec = Recording([[text("ok")]])
    lw.run("fix @src/app.py", lw.AgentOptions(model=lw.ScriptedModel(rec), tools=lw.default_tools(), cwd=work))
    assert len(_first_message(rec)) == 1


@pytest.mark.e2e
def test_print_mode_includes_mentions(work: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    out = subprocess.run([*loopwright_cmd(), "-p", "explain @src/app.py", "--model",
                          write_script(tmp_path, [[text("it returns 1")]]), "--output-format", "json"],
                         cwd=work, env=cli_env(LOOPWRIGHT_HOME=str(home)), capture_output=True, text=True, timeout=60)
    assert json.loads(out.stdout)["result"] == "it returns 1", out.stderr
    (transcript,) = list(home.rglob("*.jsonl"))
    lines = [json.loads(ln) for ln in transcript.read_text().splitlines()]
    prompt = next(ln for ln in lines if ln.get("type") == "user")
    assert json.dumps("     2\t    return 1")[1:-1] in json.dumps(prompt)


def test_completion_of_mentions(work: Path) -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    (work / ".hidden").write_text("")
    assert mention_candidates("", work) == ["notes with space.md", "secret.txt", "src/"]
    assert mention_candidates("src/a", work) == ["src/app.py"]
    assert mention_candidates(".h", work) == [".hidden"]
    c = mention_completer(lambda: str(work))
    got = list(c.get_completions(Document("fix @src/"), CompleteEvent()))
    assert [(x.text, x.start_position) for x in got] == [("@src/app.py", -5)]
    assert list(c.get_completions(Document("mail bob@s"), CompleteEvent())) == []


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_tab_completes_a_mention_in_the_terminal(work: Path, tmp_path: Path) -> None:
    from tests.cli.test_interactive_questions import repl

    with repl(tmp_path, [[text("it returns 1")]]) as t:
        t.type("explain @src/a")
        t.wait(" src/app.py ")  # the completion menu, as the typing went (a loaded machine is slow to show it)
        t.keys("Tab")
        t.wait("› explain @src/app.py")
        t.keys("Enter")
        t.wait("it returns 1")
    (transcript,) = list((tmp_path / "home").rglob("*.jsonl"))
    assert json.dumps("     1\tdef main():")[1:-1] in transcript.read_text()


def test_a_symlink_out_of_the_workspace_is_judged_where_it_points(work: Path, tmp_path: Path) -> None:
    """A hostile repository's `docs.md -> ~/.ssh/id_rsa`: the gate sees the real path, outside."""
    key = tmp_path / "home_ssh_id_rsa"
    key.write_text("PRIVATE KEY\n")
    (work / "docs.md").symlink_to(key)
    r, rec = _run(work, "summarize @docs.md", [[text("ok")]], permission_mode="acceptEdits")
    assert "PRIVATE KEY" not in json.dumps(_first_message(rec))
    assert [d["tool_input"]["file_path"] for d in r.permission_denials] == [str(key)]


def test_a_mention_swapped_to_a_link_while_asked_about_is_not_read(tmp_path: Path) -> None:
    """A mention is a Read: judged inside (work/sub/f.txt, asked about by an ask rule), then
    work/sub becomes a link to outside/ while the user answers. Approved, it must not include
    outside/'s SECRET (blockReadsOutsideWorkingDirectories would have refused it there): the read
    is held to its judgment as the Read tool's call is."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / "sub").mkdir(parents=True)
    (work / "sub" / "f.txt").write_text("inside\n")
    outside.mkdir()
    (outside / "f.txt").write_text("SECRET\n")
    (work / ".loopwright").mkdir()
    (work / ".loopwright" / "settings.json").write_text(json.dumps(
        {"permissions": {"blockReadsOutsideWorkingDirectories": True, "ask": ["Read"]}}))

    def answer(name: str, tool_input: dict[str, Any]) -> lw.Allow:
        (work / "sub").rename(work / "sub.moved")
        (work / "sub").symlink_to(outside, target_is_directory=True)
        return lw.Allow()

    r, rec = _run(work, "see @sub/f.txt", [[text("done")]], permission_mode="default", can_use_tool=answer,
                  setting_sources=["project"])
    sent = json.dumps(_first_message(rec))
    assert "SECRET" not in sent and "sub/f.txt" in sent, sent
