"""Claude Code's `model`, `fallbackModel`, `effortLevel`, `apiKeyHelper` and `disableAllHooks`
settings (issue 42): a user's `"model"` in ~/.claude/settings.json is the model unless a flag or
LOOPWRIGHT_MODEL / ANTHROPIC_MODEL names one (as on Claude Code); an apiKeyHelper alone is enough
to run, its key cached for CLAUDE_CODE_API_KEY_HELPER_TTL_MS and never written anywhere."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import loopwright as lw
from loopwright.models.catalog import resolve_alias
from loopwright.runconfig import with_settings_model
from loopwright.settings import load_settings
from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, claude_code_env, cli_env, loopwright_cmd, text, use

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"


def user_settings(home: Path, data: dict[str, object]) -> None:
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps(data))


@pytest.mark.e2e
def test_settings_model_is_used_unless_a_flag_names_one(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])  # the test's own (conftest.py)
    user_settings(home, {"model": "haiku"})
    with ScriptedServer([[text("a")], [text("b")], [text("c")]]) as srv:
        env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(home))
        for extra in ([], ["--model", "claude-sonnet-4-5"]):
            r = subprocess.run([*loopwright_cmd(), "-p", "hi", "--claude-settings", *extra], cwd=tmp_path, env=env,
                               capture_output=True, text=True, timeout=60)
            assert r.returncode == 0, r.stderr
        r = subprocess.run([*loopwright_cmd(), "-p", "hi", "--claude-settings"], cwd=tmp_path,
                           env={**env, "ANTHROPIC_MODEL": "claude-opus-4-5"}, capture_output=True, text=True, timeout=60)
        models = [q.body["model"] for q in srv.loop_requests]
    assert models[0] == resolve_alias("haiku") and models[1] == "claude-sonnet-4-5"
    assert models[2] != resolve_alias("haiku")  # ANTHROPIC_MODEL outranks the settings, as on Claude Code
    # the library: AgentOptions(model=None) with settings
    with ScriptedServer([[text("ok")]]) as srv:
        lw.run("hi", lw.AgentOptions(cwd=tmp_path, base_url=srv.url, api_key="x", setting_sources=["user"],
                                     claude_settings=True))
        assert srv.loop_requests[0].body["model"] == resolve_alias("haiku")


@pytest.mark.e2e
@pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code is not installed (npm install in tests/node)")
def test_claude_code_uses_the_settings_model_too(tmp_path: Path) -> None:
    with ScriptedServer([[text("ok")]], is_loop_call=lambda b: True) as srv:
        env = claude_code_env(srv.url, str(tmp_path / "cchome"))
        env.pop("ANTHROPIC_MODEL", None)
        r = subprocess.run([str(CLAUDE), "-p", "hi", "--settings", json.dumps({"model": "claude-haiku-4-5"})],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert {q.body.get("model") for q in srv.requests if isinstance(q.body, dict)} == {"claude-haiku-4-5"}


@pytest.mark.e2e
def test_api_key_helper_is_run_cached_and_never_logged(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    count = tmp_path / "runs"
    helper = tmp_path / "key.sh"
    helper.write_text(f"#!/bin/sh\necho run >> {count}\necho sk-helper-SECRET-123\n")
    helper.chmod(0o755)
    user_settings(home, {"apiKeyHelper": str(helper)})
    turns = [[use("t1", "Bash", command="echo hi")], [text("done")]]
    for ttl in ("", "0"):
        count.unlink(missing_ok=True)
        with ScriptedServer(turns) as srv:
            env = cli_env(ANTHROPIC_BASE_URL=srv.url, HOME=str(home), **({"CLAUDE_CODE_API_KEY_HELPER_TTL_MS": ttl}
                                                                       if ttl else {}))
            r = subprocess.run([*loopwright_cmd(), "-p", "hi", "--model", "claude-sonnet-4-5", "--claude-settings",
                                "--permission-mode", "bypassPermissions", "--debug"], cwd=tmp_path, env=env,
                               capture_output=True, text=True, timeout=60)
            assert r.returncode == 0, r.stderr
            assert [q.headers.get("x-api-key") for q in srv.loop_requests] == ["sk-helper-SECRET-123"] * 2
        runs = count.read_text().count("run")
        assert runs == 1 if not ttl else runs >= 2  # cached for the TTL (default 5 min); 0: run again per request
        assert "SECRET" not in r.stdout + r.stderr
    stored = [p for p in home.rglob("*") if p.is_file() and "SECRET" in p.read_text(errors="replace")]
    assert stored == []  # not in a transcript, a log, anything loopwright wrote
    # a failing helper: one clear error naming it, never its output
    helper.write_text("#!/bin/sh\necho partial-SECRET\necho 'vault locked' >&2\nexit 3\n")
    with ScriptedServer(turns) as srv:
        r = subprocess.run([*loopwright_cmd(), "-p", "hi", "--model", "claude-sonnet-4-5", "--claude-settings"],
                           cwd=tmp_path, env=cli_env(ANTHROPIC_BASE_URL=srv.url, HOME=str(home)),
                           capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "apiKeyHelper" in r.stderr and "vault locked" in r.stderr and "exit status 3" in r.stderr
    assert "SECRET" not in r.stdout + r.stderr


def test_an_api_key_given_outranks_the_helper(tmp_path: Path) -> None:
    helper = tmp_path / "key.sh"
    helper.write_text(f"#!/bin/sh\ntouch {tmp_path}/ran\necho from-helper\n")
    helper.chmod(0o755)
    with ScriptedServer([[text("ok")]]) as srv:
        lw.run("hi", lw.AgentOptions(cwd=tmp_path, model="claude-sonnet-4-5", base_url=srv.url, api_key="given",
                                     settings={"apiKeyHelper": str(helper)}, setting_sources=[]))
        assert srv.loop_requests[0].headers.get("x-api-key") == "given"
    assert not (tmp_path / "ran").exists()


def test_fallback_model_and_effort_from_settings(tmp_path: Path) -> None:
    s = load_settings(tmp_path, [], extra={"fallbackModel": ["opus", "claude-haiku-4-5"], "effortLevel": "high"})
    o = with_settings_model(lw.AgentOptions(cwd=tmp_path), s)
    assert o.fallback_model == [resolve_alias("opus"), "claude-haiku-4-5"] and o.effort == "high"
    given = with_settings_model(lw.AgentOptions(cwd=tmp_path, fallback_model=["claude-m2"], effort="low"), s)
    assert given.fallback_model == ["claude-m2"] and given.effort == "low"  # what the options say wins
    with ScriptedServer([[text("ok")]] * 3) as srv:  # the effort reaches the request as the option's does
        for kw in ({"settings": {"effortLevel": "high"}}, {"effort": "high"}, {}):
            lw.run("hi", lw.AgentOptions(cwd=tmp_path, model="claude-sonnet-4-5", base_url=srv.url, api_key="x",
                                         setting_sources=[], **kw))  # type: ignore[arg-type]
        bodies = [{k: q.body.get(k) for k in ("output_config", "thinking")} for q in srv.loop_requests]
    assert bodies[0] == bodies[1] != bodies[2]


def test_disable_all_hooks(tmp_path: Path) -> None:
    hook = {"hooks": [{"type": "command", "command": f"touch {tmp_path}/ran"}]}
    for disabled in (True, False):
        lw.run("hi", lw.AgentOptions(model=lw.ScriptedModel([[text("ok")]]), cwd=tmp_path, setting_sources=[],
                                     settings={"hooks": {"Stop": [hook]}, "disableAllHooks": disabled}))
        assert (tmp_path / "ran").exists() is (not disabled)


@pytest.mark.e2e
def test_a_401_reruns_the_api_key_helper_and_the_call_goes_again_like_claude_code(tmp_path: Path) -> None:
    """The server refuses the helper's first key once (401): the helper runs again at once (not
    after its TTL) and the call is made again with the new key, on loopwright as on Claude Code."""
    from loopwright.models.base import ModelError

    for who in ("loopwright", "claude"):
        if who == "claude" and not CLAUDE.exists():
            continue
        count = tmp_path / f"runs-{who}"
        helper = tmp_path / f"key-{who}.sh"
        helper.write_text(f"#!/bin/sh\necho run >> {count}\necho key-$(wc -l < {count} | tr -d ' ')\n")
        helper.chmod(0o755)
        with ScriptedServer([ModelError("invalid x-api-key", status=401), [text("ok")]], is_loop_call=lambda b: True) as srv:
            if who == "claude":
                env = {**os.environ, "HOME": str(tmp_path / "cchome"), "ANTHROPIC_BASE_URL": srv.url,
                       "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
                cmd = [str(CLAUDE)]
            else:
                env, cmd = cli_env(ANTHROPIC_BASE_URL=srv.url), loopwright_cmd()
            env.pop("ANTHROPIC_API_KEY", None)
            r = subprocess.run([*cmd, "-p", "hi", "--model", "claude-sonnet-4-5", "--settings",
                                json.dumps({"apiKeyHelper": str(helper)})], cwd=tmp_path, env=env, capture_output=True,
                               text=True, timeout=120)
            assert r.returncode == 0 and "ok" in r.stdout, (who, r.stderr)
            assert [q.headers.get("x-api-key") for q in srv.requests] == ["key-1", "key-2"], who
        assert count.read_text().count("run") == 2, who
