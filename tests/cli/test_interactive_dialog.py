"""The permission dialog and the keys, in a real terminal (issue 14 items 1-4, 8 and 12).

`loopwright` runs in tmux against a scripted model; every wait polls the screen with a
deadline. Covered: text typed while a tool runs stays in the input box and never answers the
dialog; only an explicit choice approves; letters start a "No" whose words reach the model;
the whole diff (numbered, scrollable), the whole command; "don't ask again" saves the prefix
rule Claude Code would; model text is escaped; Alt-b/f/Backspace edit and Esc alone interrupts.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from loopwright.sessions import load_transcript
from tests.cli.test_interactive import WAIT, Term
from tests.helpers import (
    LOOPWRIGHT_BIN,
    bash,
    cli_env,
    loopwright_cmd,
    text,
    until,
    use,
    write_script,
)

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
pytest.importorskip("loopwright.tools.builtin", reason="the CLI needs the built-in tools")


@contextmanager
def session(tmp_path: Path, turns: list[Any], *args: str, rows: int = 50,
            env: dict[str, str] | None = None) -> Iterator[tuple[Term, Path]]:
    """`loopwright` on a scripted model in a tmux pane, in tmp_path/work (`env`: more variables);
    yields (term, work)."""
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir(exist_ok=True)
    model = write_script(tmp_path, turns)
    name = f"lw-{uuid.uuid4().hex[:8]}"
    t = Term(name)
    more = " ".join(f"{k}='{v}'" for k, v in (env or {}).items())
    variables = f"env -u LOOPWRIGHT_SESSIONS_DIR -u LOOPWRIGHT_MODEL LOOPWRIGHT_HOME={home} {more}"
    quoted = " ".join(f"'{a}'" for a in args)
    t.tmux("new-session", "-d", "-s", name, "-x", "150", "-y", str(rows), "-c", str(work),
           f"{variables} {LOOPWRIGHT_BIN} --model {model} {quoted}")
    try:
        t.wait("Ctrl-C twice to exit")  # the toolbar: the prompt reads keys (raw mode) now
        yield t, work
    finally:
        t.tmux("kill-session", "-t", name)


def prompt_line(t: Term) -> str:
    """The input box's (last) line."""
    return [ln for ln in t.screen().splitlines() if ln.startswith("›")][-1]


def armed(t: Term, question: str) -> str:
    t.wait(question)
    return t.wait("Esc = No")  # the dialog takes keys from now on


def dialog(screen: str) -> str:
    """The dialog: what is under its top rule (the trace above shortens calls; the dialog must not)."""
    return screen[screen.rindex("─" * 40):]


def transcript(tmp_path: Path) -> list[dict[str, Any]]:
    return load_transcript(next((tmp_path / "home" / "projects").rglob("*.jsonl"))).history


def results(history: list[dict[str, Any]]) -> dict[str, str]:
    out = {}
    for m in history:
        for b in m["content"] if isinstance(m["content"], list) else []:
            if b.get("type") == "tool_result":
                c = b["content"]
                out[b["tool_use_id"]] = c if isinstance(c, str) else "".join(x.get("text", "") for x in c)
    return out


@pytest.mark.e2e
@needs_tmux
def test_typing_during_a_tool_never_answers_the_dialog(tmp_path: Path) -> None:
    work = tmp_path / "work"
    target = work / "new.txt"
    turns = [
        [text("running a slow command"), bash("sleep 3; echo slept-ok", "b1")],
        [use("w1", "Write", file_path=str(target), content="hello\nworld\n")],
        [text("ok, not written")],
        [use("w2", "Write", file_path=str(target), content="hello\n")],
        [text("understood")],
    ]
    with session(tmp_path, turns, "--allowedTools", "Bash(sleep:*)") as (t, work):
        t.type("go")
        t.keys("Enter")
        t.wait("⏺ Bash(sleep 3; echo slept-ok)")
        # typed while the tool runs (starts with "a", which the old prompt took for "always")
        t.type("actually wait don't write")
        assert "✓ Bash" not in t.wait("› actually wait don't write")  # the tool was still running
        s = t.wait("Do you want to allow this Write?")
        assert "✓ Bash: slept-ok" in s
        assert prompt_line(t) == "› actually wait don't write"  # still in the input box
        assert re.search(r"^\s+1 \+ hello$", s, re.M) and re.search(r"^\s+2 \+ world$", s, re.M), s
        assert not target.exists()
        armed(t, "Do you want to allow this Write?")
        assert not target.exists() and prompt_line(t) == "› actually wait don't write"
        t.keys("Escape")  # Esc = No
        t.wait("ok, not written")
        s = t.wait("✗ refused Write(new.txt)")
        assert not target.exists()
        assert prompt_line(t) == "› actually wait don't write"

        # the typed text is a prompt of its own; at the next dialog, letters start a "No" with those
        # words (a digit inside them is text, not a choice) and Enter sends them to the model
        t.keys("Enter")
        armed(t, "Do you want to allow this Write?")
        t.type("keep 2 spaces please")
        t.wait("3. No, and tell the model: keep 2 spaces please▌")
        assert not target.exists()
        t.keys("Enter")
        t.wait("✗ refused Write(new.txt): keep 2 spaces please")
        t.wait("understood")
        assert not target.exists()

    history = transcript(tmp_path)
    got = results(history)
    assert "refused" in got["w1"] and "said" not in got["w1"]
    assert got["w2"].endswith("said: keep 2 spaces please")
    assert {"role": "user", "content": [{"type": "text", "text": "actually wait don't write"}]} in history


@pytest.mark.e2e
@needs_tmux
def test_the_dialog_shows_the_whole_change_and_saves_the_prefix_rule(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    f = work / "f.txt"
    f.write_text("".join(f"line {i}\n" for i in range(1, 41)))
    big = work / "big.txt"
    big.write_text("".join(f"old {i}\n" for i in range(1, 101)))
    words = " ".join(f"w{i:03}" for i in range(1, 81))  # longer than a line: shown wrapped, whole
    turns = [
        [use("r1", "Read", file_path=str(f))],
        [use("e1", "Edit", file_path=str(f), old_string="line 20\n", new_string="LINE twenty\nline 20b\n")],
        [bash("python3 -m platform", "b1")],
        [bash("python3 -m platform --terse", "b2")],
        [use("w1", "Write", file_path=str(big), content="".join(f"new {i}\n" for i in range(1, 121)))],
        [bash(f"touch {words}", "b3")],
        [text("all asked")],
    ]
    with session(tmp_path, turns) as (t, work):
        t.type("go")
        t.keys("Enter")
        # Edit: the unified diff, numbered, with context
        s = armed(t, "Do you want to allow this Edit?")
        assert "Edit f.txt  (+2 -1)" in s and "@@ -17,7 +17,8 @@" in s
        for row in (r"17   line 17", r"20 - line 20", r"20 \+ LINE twenty", r"21 \+ line 20b", r"24   line 23"):
            assert re.search(rf"^\s+{row}$", s, re.M), (row, s)
        assert "line 16" not in s
        t.type("1")
        t.wait("✓ approved Edit(f.txt")
        assert until(lambda: "LINE twenty\nline 20b\nline 21\n" in f.read_text(), WAIT)

        # Bash: the whole command; "don't ask again" offers the prefix rule and saves it
        s = armed(t, "Do you want to allow this Bash?")
        assert "$ python3 -m platform" in s
        assert ("2. Yes, and don't ask again for Bash(python3 -m platform:*) (saved to "
                ".loopwright/settings.local.json)") in s
        t.keys("Down")
        t.wait("❯ 2. Yes, and don't ask again")
        t.keys("Enter")
        t.wait("✓ approved; Bash(python3 -m platform:*) saved to")
        settings = json.loads((work / ".loopwright" / "settings.local.json").read_text())
        assert settings == {"permissions": {"allow": ["Bash(python3 -m platform:*)"]}}
        # the next call the rule covers runs without a question
        t.wait("⏺ Bash(python3 -m platform --terse)")
        t.wait("✓ Bash:", count=2)

        # a long Write over an existing file: the diff scrolls, nothing is cut
        s = armed(t, "Do you want to allow this Write?")
        assert "Write big.txt  (overwrites the file: +120 -100)" in s
        assert re.search(r"lines 1-\d+ of 221 · PgUp/PgDn to scroll", s), s
        for _ in range(12):
            t.keys("PageDown")
        s = t.wait("of 221 · PgUp/PgDn")
        assert until(lambda: re.search(r"lines \d+-221 of 221", t.screen()) is not None, WAIT), t.screen()
        assert re.search(r"^\s+120 \+ new 120$", t.screen(), re.M) and "…" not in dialog(t.screen())
        t.type("3")  # No (no words)
        t.wait("✗ refused Write(big.txt)")
        assert big.read_text().startswith("old 1\n")

        # a command longer than the screen is wide: every word shown
        s = dialog(armed(t, "Do you want to allow this Bash?"))
        assert "$ touch w001" in s and all(f"w{i:03}" in s for i in range(1, 81)) and "…" not in s
        t.keys("Escape")
        t.wait("all asked")
    got = results(transcript(tmp_path))
    assert "refused" in got["w1"] and "refused" in got["b3"]
    assert "Exit code" not in got["b2"] and "refused" not in got["b2"]


@pytest.mark.e2e
@needs_tmux
def test_model_text_is_escaped_and_alt_keys_edit_the_line(tmp_path: Path) -> None:
    turns = [
        [text("before \x1b[2J\x1b[H cleared? \u202eevil\u202c bell\x07 end")],
        [text("sleeping"), bash("sleep 2; echo slept-ok", "b1")],
        [text("awake")],
        [bash("sleep 31.9", "b2")],
        [text("never")],
    ]
    with session(tmp_path, turns, "--allowedTools", "Bash(sleep:*)") as (t, _):
        # Alt-b / Alt-f move by words, Alt-Backspace deletes one
        t.type("alpha beta gamma")
        t.keys("M-b")
        t.type("X")
        t.wait("› alpha beta Xgamma")
        t.keys("M-b", "M-b")  # alpha |beta Xgamma
        t.keys("M-f")  # alpha beta| Xgamma
        t.type("Y")
        t.wait("› alpha betaY Xgamma")
        t.keys("M-BSpace")
        t.wait("› alpha  Xgamma")
        t.keys("C-c")  # clears the line
        assert until(lambda: prompt_line(t).rstrip() == "›", WAIT)
        # model text with a screen-clearing sequence and a bidi override: shown, not obeyed
        t.type("hello")
        t.keys("Enter")
        s = t.wait("● success")
        assert r"before \x1b[2J\x1b[H cleared? \u202eevil\u202c bell\x07 end" in s
        visible_now = t.tmux("capture-pane", "-p", "-t", t.name)  # the screen, without the scrollback
        assert "loopwright · scripted:" in visible_now and "before" in visible_now  # it was not cleared
        # an Alt key while a tool runs does not interrupt it
        t.type("sleep")
        t.keys("Enter")
        t.wait("⏺ Bash(sleep 2; echo slept-ok)")
        t.keys("M-b")
        t.wait("awake")
        assert "✓ Bash: slept-ok" in t.screen() and "Interrupted" not in t.screen()
        # Esc alone does
        t.type("long")
        t.keys("Enter")
        t.wait("⏺ Bash(sleep 31.9)")
        t.keys("Escape")
        t.wait("✗ Bash: Interrupted by user")


@pytest.mark.e2e
def test_print_mode_prints_the_whole_permission_hint(tmp_path: Path) -> None:
    """`-p`'s text trace, without --verbose: the refusal in full, ending with the rule to add."""
    model = write_script(tmp_path, [[bash("python3 -m pytest -q tests/test_some_rather_long_name.py")],
                                    [text("done")]])
    p = subprocess.run([*loopwright_cmd(), "-p", "go", "--model", model, "--no-session-persistence"],
                       cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    [line] = [ln for ln in p.stderr.splitlines() if "Permission denied" in ln]
    assert line.endswith("To allow it, add a rule such as --allowedTools 'Bash(python3 -m pytest:*)' (or "
                         "permissions.allow in .loopwright/settings.json), or run with --permission-mode "
                         "bypassPermissions."), line
    assert "…" not in line


# --- the parts, in-process ----------------------------------------------------------------------

@pytest.mark.parametrize(("command", "rules", "sibling"), [
    ("python3 -m pytest -q tests/", ["Bash(python3 -m pytest:*)"], "python3 -m pip install evil"),
    ("npm run test -- --watch", ["Bash(npm run test:*)"], "npm run deploy"),
    ("git add . && git commit -m 'a b'", ["Bash(git add:*)", "Bash(git commit:*)"], "git push --force"),
    ("cd sub && make test", ["Bash(make test:*)"], "make install"),
    ("rm -rf build", ["Bash(rm:*)"], "rmdir build"),
    ("python3 tools/gen.py --all", ["Bash(python3 tools/gen.py:*)"], "python3 tools/other.py"),
])
def test_dont_ask_again_suggests_prefix_rules_that_approve_the_call_only(
        tmp_path: Path, command: str, rules: list[str], sibling: str) -> None:
    from loopwright.gate import Permissions

    (tmp_path / "sub").mkdir()
    assert Permissions("default", cwd=tmp_path).suggest_rules("Bash", {"command": command}) == rules
    assert Permissions("default", cwd=tmp_path).evaluate("Bash", {"command": command}).kind == "ask"
    with_rules = Permissions("default", rules, cwd=tmp_path)
    assert with_rules.evaluate("Bash", {"command": command}).allowed
    assert not with_rules.evaluate("Bash", {"command": sibling}).allowed


@pytest.mark.parametrize("command", ["sudo make install", "python3 -c 'import os'", "git -C x push",
                                     "$(get) arg", "bash script.sh", "if [[ -f x ]]; then make; fi"])
def test_no_prefix_rule_where_a_prefix_would_approve_anything(tmp_path: Path, command: str) -> None:
    from loopwright.gate import Permissions

    assert Permissions("default", cwd=tmp_path).suggest_rules("Bash", {"command": command}) == []


def test_edit_rules_name_the_files_directory(tmp_path: Path) -> None:
    from loopwright.gate import Permissions

    p = Permissions("default", cwd=tmp_path)
    assert p.suggest_rules("Write", {"file_path": str(tmp_path / "src" / "a.py")}) == ["Edit(./src/**)"]
    assert p.suggest_rules("Edit", {"file_path": "b.py"}) == ["Edit(./**)"]
    assert p.suggest_rules("Edit", {"file_path": "/elsewhere/x/c.py"}) == ["Edit(//elsewhere/x/**)"]
    assert p.suggest_rules("WebFetch", {"url": "https://docs.example.com/a"}) == ["WebFetch(domain:docs.example.com)"]
    rules = p.suggest_rules("Write", {"file_path": "src/a.py"})
    assert Permissions("default", rules, cwd=tmp_path).evaluate("Write", {"file_path": "src/new.py"}).allowed
    assert not Permissions("default", rules, cwd=tmp_path).evaluate("Write", {"file_path": "top.py"}).allowed


def test_saving_rules_keeps_the_rest_of_the_local_settings(tmp_path: Path) -> None:
    from loopwright.settings import SettingsError, add_local_allow_rules, load_settings

    f = tmp_path / ".loopwright" / "settings.local.json"
    f.parent.mkdir()
    f.write_text(json.dumps({"env": {"A": "1"}, "permissions": {"allow": ["Read"], "deny": ["Bash(rm:*)"]}}))
    assert add_local_allow_rules(tmp_path, ["Bash(make test:*)", "Read"]) == f
    assert json.loads(f.read_text()) == {"env": {"A": "1"}, "permissions": {
        "allow": ["Read", "Bash(make test:*)"], "deny": ["Bash(rm:*)"]}}
    assert "Bash(make test:*)" in [str(r) for r in load_settings(tmp_path, ["local"]).allow]
    f.write_text("{not json")
    with pytest.raises(SettingsError, match="invalid JSON"):
        add_local_allow_rules(tmp_path, ["Bash(make:*)"])
    assert f.read_text() == "{not json"  # not clobbered
    with pytest.raises(ValueError, match="malformed"):
        add_local_allow_rules(tmp_path / "x", ["Bash(unclosed"])


def test_dialog_keys_only_an_explicit_choice_approves() -> None:
    import asyncio

    from loopwright.cli.dialog import ARM_DELAY, Answer, PermissionDialog
    from loopwright.cli.preview import Preview

    async def answer(*steps: str) -> Answer:
        d = PermissionDialog("Bash", Preview("Bash command"), "Yes, and don't ask again", now=0.0)
        assert not d.armed(ARM_DELAY / 2) and d.armed(ARM_DELAY)
        for s in steps:
            if s == "!move":
                d.move(1)
            elif s == "!paste":
                d.type("1. do it my way", paste=True)
            else:
                getattr(d, s[1:])() if s.startswith("!") else d.type(s)
        assert d.answer.done()
        return d.answer.result()

    async def go() -> None:
        assert await answer("1") == Answer("yes")
        assert await answer("2") == Answer("always")
        assert await answer("!escape") == Answer("no")
        assert await answer("!enter") == Answer("yes")  # Enter on the first choice: an explicit choice
        assert await answer("yes do it 1", "!enter") == Answer("no", "yes do it 1")  # letters start a "No"
        assert await answer("use 2 spaces", "!escape") == Answer("no", "use 2 spaces")  # words kept
        assert await answer("9", "!move", "!enter") == Answer("always")  # 9 is no choice; Down, Enter
        assert await answer("ab", "!backspace", "!backspace", "1") == Answer("yes")
        assert await answer("!paste", "!enter") == Answer("no", "1. do it my way")  # a paste is words

    asyncio.run(go())


def test_dialog_rows_wrap_and_scroll() -> None:
    import asyncio

    from loopwright.cli.dialog import PermissionDialog
    from loopwright.cli.preview import permission_preview

    async def go() -> None:
        cmd = "echo " + " ".join(f"w{i:03}" for i in range(200))
        d = PermissionDialog("Bash", permission_preview("Bash", {"command": cmd}), "Yes, always")
        rows = ["".join(t for _, t in r) for r in d.rows(60, 100)]
        assert all(len(r) <= 60 for r in rows)
        assert "".join(cmd.split()) in "".join("".join(rows).split())  # wrapped, not cut
        small = ["".join(t for _, t in r) for r in d.rows(60, 20)]
        assert len(small) <= 20 and any("PgUp/PgDn" in r for r in small)
        d.scroll_by(100)
        last = ["".join(t for _, t in r) for r in d.rows(60, 20)]
        assert "w199" in "".join(last) and "w000" not in "".join(last)

    asyncio.run(go())


def test_previews_show_the_whole_change_escaped(tmp_path: Path) -> None:
    from loopwright.cli.preview import permission_preview

    def flat(p: Any) -> list[str]:
        return ["".join(t for _, t in ln) for ln in p.lines]

    f = tmp_path / "a.txt"
    f.write_text("one\ntwo\nthree\n")
    p = permission_preview("MultiEdit", {"file_path": str(f), "edits": [
        {"old_string": "one", "new_string": "ONE"}, {"old_string": "three", "new_string": "3\x1b[2J"}]}, tmp_path)
    assert p.title == "MultiEdit a.txt" and p.summary == "+2 -2"
    assert flat(p) == ["@@ -1,3 +1,3 @@", "    1 - one", "    1 + ONE", "    2   two", "    3 - three",
                       "    3 + 3\\x1b[2J"]
    p = permission_preview("Edit", {"file_path": str(f), "old_string": "four", "new_string": "4"}, tmp_path)
    assert p.summary == "will fail" and flat(p)[0].startswith("this edit will fail: String to replace not found")
    assert flat(p)[1:] == ["    1 - four", "    1 + 4"]
    p = permission_preview("Write", {"file_path": str(tmp_path / "new.py"), "content": "a\n\u202eb\n"}, tmp_path)
    assert p.summary == "new file, 2 lines" and flat(p) == ["    1 + a", "    2 + \\u202eb"]
    p = permission_preview("Write", {"file_path": str(f), "content": "one\ntwo\nthree"}, tmp_path)
    assert flat(p) == ["the file no longer ends with a newline"]
