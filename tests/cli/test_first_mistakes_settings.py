"""A new user's first mistakes in a settings file, each as a real `loopwright` subprocess in a temp
dir with its own HOME: one line naming the setting and what to write instead, exit 2 before any
model request, never a Python traceback and never a value quietly replaced by a default."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import cli_env, loopwright_cmd

pytestmark = pytest.mark.e2e


def run(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*loopwright_cmd(), *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                          env=cli_env(HOME=str(cwd / "home"), LOOPWRIGHT_HOME=str(cwd / "home" / ".loopwright"), **env),
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(("value", "says"), [("nosuch", "openai:nosuch"), ("openai:", "openai:")])
def test_a_settings_model_naming_no_model_is_refused_not_replaced_by_the_default(
        tmp_path: Path, value: str, says: str) -> None:
    """`"model": "nosuch"` in settings.json ran claude-sonnet-5-5 instead, saying nothing (the
    refusal was dropped on the way); `--model nosuch` was refused."""
    home = tmp_path / "home" / ".loopwright"
    home.mkdir(parents=True)
    (home / "settings.json").write_text(f'{{"model": "{value}"}}')
    requests: list[str] = []
    with ScriptedServer([[{"type": "text", "text": "ok"}]], log=requests.append) as srv:
        p = run("-p", "hi", cwd=tmp_path, ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="k")
    assert "Traceback" not in p.stderr
    assert p.returncode == 2, p.stderr
    assert requests == []
    [line] = p.stderr.splitlines()
    assert line.startswith("loopwright: settings: model=") and says in line, line


@pytest.mark.parametrize(("script", "says"), [
    ('[{"type": "text", "text": "hi"}]',  # one turn's blocks, not a list of turns: ran as an empty answer
     'turn 1 is an object without "content": a turn is a list of blocks or {"content": [...]} '
     '(a script of one turn is [[...]])'),
    ('[[{"type": "txt", "text": "hi"}]]',  # a typo'd block type: a success with an empty answer
     "turn 1, block 1: unknown block type 'txt' (did you mean text?)"),
    ('[[{"type": "tool_use", "id": "t1", "input": {}}]]', "turn 1, block 1: tool_use block is missing field 'name'"),
])
@pytest.mark.parametrize("how", ["-p", "serve-scripted"])
def test_a_scripted_model_file_of_the_wrong_shape_is_refused_naming_the_turn(
        tmp_path: Path, script: str, says: str, how: str) -> None:
    """A hand-written script file is checked when read, as a settings file is, not played as
    something else."""
    (tmp_path / "turns.json").write_text(script)
    args = ("-p", "hi", "--model", "scripted:turns.json") if how == "-p" else ("serve-scripted", "turns.json")
    p = run(*args, cwd=tmp_path)
    assert "Traceback" not in p.stderr
    assert p.returncode == 2, p.stderr
    [line] = p.stderr.splitlines()
    assert line.endswith(f"turns.json: {says}"), line


def test_a_settings_rule_naming_a_mistyped_tool_is_named_with_the_tool_it_looks_like(tmp_path: Path) -> None:
    """`"deny": ["Wirte"]` denied nothing and said nothing (the flags' rules said it; a settings file's
    did not); a rule naming a program's own tool (`lookup`), like nothing known, still says nothing."""
    home = tmp_path / "home" / ".loopwright"
    home.mkdir(parents=True)
    (home / "settings.json").write_text('{"permissions": {"allow": ["Bsh(ls:*)", "lookup", "Bash(ls:*)"], '
                                        '"deny": ["Wirte"], "ask": ["mcp__fs__write"]}}')
    (tmp_path / "turns.json").write_text('[[{"type": "text", "text": "ok"}]]')
    p = run("-p", "hi", "--model", "scripted:turns.json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    said = [ln.split("settings.json: ", 1)[1] for ln in p.stderr.splitlines() if "no tool is named" in ln]
    assert said == ["permissions.allow Bsh(ls:*): no tool is named Bsh (did you mean Bash?); the rule matches nothing",
                    "permissions.deny Wirte: no tool is named Wirte (did you mean Write?); the rule matches nothing"], \
        p.stderr


def test_every_flag_a_refusal_advises_is_one_loopwright_takes() -> None:
    """`autoCompactEnabled` was refused with "(--context-window, --no-auto-compact)": a user who
    followed it got `unrecognized arguments: --no-auto-compact`. Each flag named in the advice of a
    refused setting, flag or command is one the command line takes."""
    import re

    from loopwright import settingskeys
    from loopwright.cli import build_parser
    from loopwright.cli.claude_flags import COMMANDS, REFUSED

    known = set(build_parser()._option_string_actions)
    advice = [*settingskeys.REFUSED.values(), *REFUSED.values(), *COMMANDS.values()]
    named = {flag for text in advice for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]+", text)}
    assert named and named <= known, sorted(named - known)


def test_anthropic_model_in_the_environment_names_the_model_as_in_claude_code(tmp_path: Path) -> None:
    """ANTHROPIC_MODEL (Claude Code's variable, which the settings page says ranks above the
    settings' "model") was read only from AgentOptions.env: in the shell it did nothing, and it
    also hid the settings' "model", so the default model ran."""
    home = tmp_path / "home" / ".loopwright"
    home.mkdir(parents=True)
    (home / "settings.json").write_text('{"model": "claude-haiku-4-5"}')
    with ScriptedServer([[{"type": "text", "text": "ok"}]] * 2, strict=False) as srv:
        p = run("-p", "hi", cwd=tmp_path, ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="k",
                ANTHROPIC_MODEL="opus")
        assert p.returncode == 0, p.stderr
        p = run("-p", "hi", cwd=tmp_path, ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="k")
        assert p.returncode == 0, p.stderr
        assert [q.body["model"] for q in srv.loop_requests] == ["claude-opus-5-5", "claude-haiku-4-5"]


@pytest.mark.parametrize("var", ["LOOPWRIGHT_MODEL", "ANTHROPIC_MODEL"])
def test_a_model_variable_naming_no_model_is_named_in_the_refusal(tmp_path: Path, var: str) -> None:
    """`unknown model 'nosuch'` with no --model on the command line left the user looking for it."""
    p = run("-p", "hi", cwd=tmp_path, ANTHROPIC_API_KEY="k", **{var: "nosuch"})
    assert p.returncode == 2, p.stderr
    [line] = p.stderr.splitlines()
    assert line.startswith(f"loopwright: {var}=nosuch: unknown model 'nosuch'"), line


@pytest.mark.parametrize(("var", "value"), [("--base-url", "localhost:11434/v1"), ("OPENAI_BASE_URL", "localhost:8080")])
def test_a_base_url_without_its_scheme_is_refused_at_start_with_the_url_to_write(
        tmp_path: Path, var: str, value: str) -> None:
    """`--base-url localhost:11434/v1` started the run and ended it with exit 1 ("the base URL ... is
    not an http(s) URL", after the session header); now a usage error naming the URL to write."""
    args = ("--base-url", value) if var == "--base-url" else ()
    env = {} if args else {var: value}
    p = run("-p", "hi", "--model", "openai:qwen", *args, cwd=tmp_path, OPENAI_API_KEY="k", **env)
    assert p.returncode == 2, p.stderr
    [line] = p.stderr.splitlines()
    assert line == f"loopwright: {var} {value} is not an http(s) URL: write http://{value}", line


def test_a_base_url_refusal_does_not_repeat_the_urls_credentials(tmp_path: Path) -> None:
    """The refusal of a scheme-less base URL names the URL to write without the password it carries."""
    p = run("-p", "hi", "--model", "openai:qwen", "--base-url", "bob:s3cret@localhost:8080/v1",
            cwd=tmp_path, OPENAI_API_KEY="k")
    assert p.returncode == 2, p.stderr
    assert "s3cret" not in p.stderr and "bob" not in p.stderr, p.stderr
    assert p.stderr.strip() == ("loopwright: --base-url ***@localhost:8080/v1 is not an http(s) URL: "
                                "write http://***@localhost:8080/v1"), p.stderr


@pytest.mark.parametrize(("model", "says"), [
    ("gpt-4o", "loopwright: unknown model 'gpt-4o': for an OpenAI(-compatible) model write --model openai:gpt-4o "
               "(and --base-url for your own server); else claude-<model> (Anthropic), anthropic:<id> or "
               "scripted:FILE.json"),
    ("sonet", "loopwright: unknown model 'sonet' (did you mean sonnet?): for an OpenAI(-compatible) model write "
              "--model openai:sonet (and --base-url for your own server); else claude-<model> (Anthropic), "
              "anthropic:<id> or scripted:FILE.json"),
])
def test_a_bare_model_name_is_answered_with_the_model_flag_to_write(tmp_path: Path, model: str, says: str) -> None:
    """"use ... openai:<model>" left the user to work out `--model openai:gpt-4o`; a mistyped alias
    is named with the alias it looks like."""
    p = run("-p", "hi", "--model", model, cwd=tmp_path, ANTHROPIC_API_KEY="k")
    assert p.returncode == 2, p.stderr
    assert p.stderr.splitlines() == [says]


def test_an_empty_model_flag_says_the_flag_is_empty(tmp_path: Path) -> None:
    """`--model "$MODEL"` with MODEL unset said "model='anthropic:' needs a model id"."""
    p = run("-p", "hi", "--model", "", cwd=tmp_path, ANTHROPIC_API_KEY="k")
    assert p.returncode == 2, p.stderr
    assert p.stderr.splitlines() == ["loopwright: --model is empty: give a model, e.g. --model claude-sonnet-5-5 or "
                                     "--model openai:<model>"]
