"""Claude Code's environment variables (ccenv.py's table) through the `loopwright -p` CLI against
the loopback Messages server: the honoured ones change the request or the tool's behaviour, from
the environment or a settings file's `env`; the others, and a malformed number, are named in one
line at run start, and the run goes on."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import bash, cli_env, loopwright_cmd, text

pytestmark = pytest.mark.e2e


def run(tmp_path: Path, url: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    return subprocess.run([*loopwright_cmd(), "-p", "go", "--base-url", url, "--permission-mode", "bypassPermissions",
                           *args], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env=cli_env(HOME=str(home), LOOPWRIGHT_HOME=str(home / ".loopwright"),
                                      ANTHROPIC_API_KEY="k", **env), stdin=subprocess.DEVNULL)


def results(srv: ScriptedServer) -> list[str]:
    """The text of each tool result the model was sent, in order."""
    out: dict[str, str] = {}
    for q in srv.loop_requests:
        for m in q.body["messages"]:
            for b in m["content"] if isinstance(m["content"], list) else []:
                if b.get("type") == "tool_result":
                    c = b["content"]
                    out[b["tool_use_id"]] = c if isinstance(c, str) else "".join(x.get("text", "") for x in c)
    return list(out.values())


def settings(tmp_path: Path, env: dict[str, str]) -> str:
    p = tmp_path / "cc-settings.json"
    p.write_text(json.dumps({"env": env}))
    return str(p)


def test_bash_timeouts_and_output_length_from_env(tmp_path: Path) -> None:
    """BASH_MAX_OUTPUT_LENGTH (a settings file's env) cuts what the model sees; BASH_DEFAULT_TIMEOUT_MS
    ends a call that gives no timeout, BASH_MAX_TIMEOUT_MS one that asks for more: each was passed
    over without a word (a 30 s sleep ran its 30 s)."""
    long = bash("printf 'x%.0s' $(seq 1 2000); echo; echo END", "t1")
    slow = bash("sleep 30", "t2")
    asks_more = {**bash("sleep 30", "t3"), "input": {"command": "sleep 30", "timeout": 600000}}
    background = {**bash("", "t0"), "input": {"command": long["input"]["command"], "run_in_background": True}}
    read_back = {"type": "tool_use", "id": "t4", "name": "BashOutput", "input": {"bash_id": "bash_1"}}
    turns: list[Any] = [[background], [long], [slow], [asks_more], [read_back], [text("done")]]
    with ScriptedServer(turns) as srv:
        p = run(tmp_path, srv.url, "--settings", settings(tmp_path, {"BASH_MAX_OUTPUT_LENGTH": "300"}),
                BASH_DEFAULT_TIMEOUT_MS="1000", BASH_MAX_TIMEOUT_MS="1500")
        got = results(srv)
    assert p.returncode == 0, p.stderr
    assert len(got) == 5, got
    assert "END" in got[1]  # (head and tail kept)
    for cut in (got[1], got[4]):  # (a background shell's output too, read by BashOutput 2.5 s later)
        assert "truncated" in cut and cut.count("x") < 400 and len(cut) < 800, cut
    assert "timed out" in got[2].lower() or "timeout" in got[2].lower(), got[2]
    assert "timed out" in got[3].lower() or "timeout" in got[3].lower(), got[3]


def test_output_and_thinking_tokens_from_env(tmp_path: Path) -> None:
    """CLAUDE_CODE_MAX_OUTPUT_TOKENS is every call's max_tokens, MAX_THINKING_TOKENS turns thinking on
    with that budget (settings env over the environment; a model that takes a budget), 0 turns it off."""
    model = ("--model", "claude-sonnet-4-5")
    with ScriptedServer([[text("ok")]]) as srv:
        p = run(tmp_path, srv.url, *model, "--settings", settings(tmp_path, {"MAX_THINKING_TOKENS": "2048"}),
                CLAUDE_CODE_MAX_OUTPUT_TOKENS="5000", MAX_THINKING_TOKENS="1")
        body = srv.loop_requests[0].body
    assert p.returncode == 0, p.stderr
    assert body["max_tokens"] == 5000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    with ScriptedServer([[text("ok")]]) as srv:  # unset: loopwright's own defaults
        assert run(tmp_path, srv.url, *model).returncode == 0
        body = srv.loop_requests[0].body
    assert body["max_tokens"] != 5000 and "thinking" not in body
    with ScriptedServer([[text("ok")]]) as srv:  # a settings file's 0 over the environment's budget: off
        p = run(tmp_path, srv.url, *model, "--settings", settings(tmp_path, {"MAX_THINKING_TOKENS": "0"}),
                MAX_THINKING_TOKENS="2048")
        body = srv.loop_requests[0].body
    assert p.returncode == 0, p.stderr
    assert body.get("thinking") in (None, {"type": "disabled"})


def test_unused_variables_and_a_malformed_number_are_named_in_one_line(tmp_path: Path) -> None:
    """Bedrock, the small fast model (a settings env): each named with what loopwright does instead;
    BASH_DEFAULT_TIMEOUT_MS=abc is named and the default used; a flag set to 0 is not said."""
    with ScriptedServer([[bash("echo hi")], [text("done")]]) as srv:
        p = run(tmp_path, srv.url, "--settings", settings(tmp_path, {"ANTHROPIC_SMALL_FAST_MODEL": "claude-haiku-4-5"}),
                CLAUDE_CODE_USE_BEDROCK="1", CLAUDE_CODE_USE_VERTEX="0", BASH_DEFAULT_TIMEOUT_MS="abc")
        got = results(srv)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr and got and "hi" in got[0]
    lines = p.stderr.splitlines()
    for name in ("CLAUDE_CODE_USE_BEDROCK", "ANTHROPIC_SMALL_FAST_MODEL"):
        said = [x for x in lines if name in x]
        assert len(said) == 1 and "does not use it" in said[0], p.stderr
    assert [x for x in lines if "BASH_DEFAULT_TIMEOUT_MS='abc'" in x and "default" in x], p.stderr
    assert "CLAUDE_CODE_USE_VERTEX" not in p.stderr


def test_disable_prompt_caching_leaves_out_the_cache_marks(tmp_path: Path) -> None:
    """DISABLE_PROMPT_CACHING=1 (a settings file's env): no cache_control anywhere in the request;
    unset (or 0), loopwright marks the system prompt and the last message as before."""
    def marks(body: dict[str, Any]) -> int:
        return json.dumps(body).count('"cache_control"')

    with ScriptedServer([[text("ok")]]) as srv:
        p = run(tmp_path, srv.url, "--settings", settings(tmp_path, {"DISABLE_PROMPT_CACHING": "1"}))
        off = srv.loop_requests[0].body
    assert p.returncode == 0, p.stderr
    with ScriptedServer([[text("ok")]]) as srv:
        assert run(tmp_path, srv.url, DISABLE_PROMPT_CACHING="0").returncode == 0
        on = srv.loop_requests[0].body
    assert marks(off) == 0 and marks(on) > 0


def test_mcp_timeout_from_a_settings_files_env(tmp_path: Path) -> None:
    """A settings file's MCP_TIMEOUT bounds loopwright's own wait for an MCP server to start (it was
    only given to the servers: a server that never answers held the run for the default 30 s)."""
    pytest.importorskip("mcp", reason="the MCP SDK is not installed")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"mute": {"command": "sleep", "args": ["60"]}}}))
    with ScriptedServer([[text("ok")]]) as srv:
        p = run(tmp_path, srv.url, "--mcp-config", str(config),
                "--settings", settings(tmp_path, {"MCP_TIMEOUT": "1000"}))
    assert p.returncode == 0, p.stderr
    assert "did not start within 1 s (MCP_TIMEOUT)" in p.stderr, p.stderr


def test_every_honoured_variable_names_a_test_that_exists() -> None:
    """The table's honoured rows each point at a test function that is there (one home: ccenv.py)."""
    from loopwright.ccenv import HONOURED, REFUSED

    root = Path(__file__).resolve().parents[2]
    assert not set(HONOURED) & set(REFUSED)
    for name, (_, test) in HONOURED.items():
        file, _, func = test.partition("::")
        assert f"def {func}(" in (root / file).read_text(), (name, test)


def test_subagent_model_from_env(tmp_path: Path) -> None:
    """CLAUDE_CODE_SUBAGENT_MODEL (a settings file's env) is the subagent's model, over its agent's
    `model`; the main thread keeps its own (it was passed over: the agent's model ran)."""
    from tests.helpers import use

    agents = json.dumps({"quick": {"description": "quick", "prompt": "be quick", "model": "claude-haiku-4-5"}})
    turns: list[Any] = [[use("a1", "Agent", subagent_type="quick", description="q", prompt="go")],
                        [text("sub done")], [text("ok")]]
    with ScriptedServer(turns) as srv:
        p = run(tmp_path, srv.url, "--model", "claude-sonnet-4-5", "--agents", agents,
                "--settings", settings(tmp_path, {"CLAUDE_CODE_SUBAGENT_MODEL": "opus"}))
        models = [q.body["model"] for q in srv.loop_requests]
    assert p.returncode == 0, p.stderr
    assert models[0] == models[-1] == "claude-sonnet-4-5" and len(models) == 3, models
    assert models[1].startswith("claude-opus"), models


def test_api_timeout_ms_ends_a_call_to_a_slow_server(tmp_path: Path) -> None:
    """A settings file's API_TIMEOUT_MS=1000 ends a call the server holds for 4 s, and the error names
    it (it was refused: loopwright waited its own 600 s); CLAUDE_CODE_MAX_RETRIES=0: no retry. Set in
    the environment to 20000, the same server's answer, 4 s late, is waited for."""

    slow: list[Any] = [{"content": [text("late")], "delay": 4}]
    with ScriptedServer(slow) as srv:
        p = run(tmp_path, srv.url, "--settings", settings(tmp_path, {"API_TIMEOUT_MS": "1000"}),
                CLAUDE_CODE_MAX_RETRIES="0")
        calls = len(srv.loop_requests)
    assert p.returncode != 0, p.stdout
    said = [x for x in (p.stdout + p.stderr).splitlines() if "API_TIMEOUT_MS" in x]
    assert said and "1000 ms" in said[0] and "timeout" in said[0].lower(), (p.stdout, p.stderr)
    # ended by the timeout, not the answer (which would have been a success), and not retried; no
    # bound on the time taken: it holds the CLI's start, which a loaded machine stretches past 4 s
    assert "late" not in p.stdout and calls == 1, (p.stdout, calls)
    with ScriptedServer([{"content": [text("late")], "delay": 4}]) as srv:
        # (20 s, not 5: a loaded machine may hand over the answer held 4 s more than a second late)
        p = run(tmp_path, srv.url, API_TIMEOUT_MS="20000", CLAUDE_CODE_MAX_RETRIES="0")
    assert p.returncode == 0 and "late" in p.stdout, (p.stdout, p.stderr)


def test_max_mcp_output_tokens_from_a_settings_files_env(tmp_path: Path) -> None:
    """A settings file's MAX_MCP_OUTPUT_TOKENS=50 cuts an MCP tool's output at 200 characters and the
    notice names it (it was read from the process's environment only: the 1,000 characters went whole)."""
    pytest.importorskip("mcp", reason="the MCP SDK is not installed")
    import sys

    from tests.helpers import use

    server = Path(__file__).resolve().parents[1] / "mcp" / "mcp_test_server.py"
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"t": {"command": sys.executable, "args": [str(server)]}}}))
    with ScriptedServer([[use("m1", "mcp__t__big", n=1000)], [text("done")]]) as srv:
        p = run(tmp_path, srv.url, "--mcp-config", str(config),
                "--settings", settings(tmp_path, {"MAX_MCP_OUTPUT_TOKENS": "50"}))
        got = results(srv)
    assert p.returncode == 0, p.stderr
    assert len(got) == 1 and got[0].startswith("x" * 200) and "x" * 201 not in got[0], got
    assert "MAX_MCP_OUTPUT_TOKENS=50" in got[0], got


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_api_timeout_ms_from_the_environment_bounds_a_library_models_wait(
        provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model made in Python (resolve_model: both HTTP providers) waits API_TIMEOUT_MS for a server
    that holds its answer, and the ModelError names it; an explicit `timeout` is over it."""
    import asyncio

    from loopwright.models import ModelError, ModelRequest, complete, resolve_model
    from loopwright.models.http import HTTPModel

    monkeypatch.setenv("API_TIMEOUT_MS", "500")
    spec = "claude-sonnet-4-5" if provider == "anthropic" else "openai:gpt-4o"
    request = ModelRequest("sys", [], [{"role": "user", "content": "hi"}])
    with ScriptedServer([{"content": [text("late")], "delay": 3}]) as srv:
        base = srv.url if provider == "anthropic" else srv.url + "/v1"
        model = resolve_model(spec, base_url=base, api_key="k", max_retries=0)
        with pytest.raises(ModelError) as e:  # (the answer, 3 s late, would have been no error: no time bound)
            asyncio.run(complete(model, request))
    assert "API_TIMEOUT_MS" in str(e.value) and "500 ms" in str(e.value), e.value
    explicit = resolve_model(spec, base_url="http://127.0.0.1:9", api_key="k", timeout=30.0)
    assert isinstance(explicit, HTTPModel) and explicit.timeout == 30.0
    assert explicit.total_timeout == 1800.0
    long = resolve_model(spec, api_key="k", timeout=3600.0)
    assert isinstance(long, HTTPModel) and long.total_timeout == 3600.0  # (never cut before one silence ends)



def test_effort_from_env(tmp_path: Path) -> None:
    """A settings file's CLAUDE_CODE_EFFORT_LEVEL is the call's effort (it was passed over without a
    word); a word that is no effort level is named in one line and the model's own effort used."""
    model = ("--model", "claude-sonnet-4-6")
    with ScriptedServer([[text("ok")]]) as srv:
        p = run(tmp_path, srv.url, *model, "--settings", settings(tmp_path, {"CLAUDE_CODE_EFFORT_LEVEL": "low"}))
        body = srv.loop_requests[0].body
    assert p.returncode == 0, p.stderr
    assert body.get("output_config") == {"effort": "low"}, body.get("output_config")
    with ScriptedServer([[text("ok")]]) as srv:
        p = run(tmp_path, srv.url, *model, CLAUDE_CODE_EFFORT_LEVEL="extreme")
        body = srv.loop_requests[0].body
    assert p.returncode == 0, p.stderr
    assert "output_config" not in body
    said = [x for x in p.stderr.splitlines() if "CLAUDE_CODE_EFFORT_LEVEL" in x]
    assert len(said) == 1 and "'extreme'" in said[0], p.stderr


def test_disable_compact_and_max_context_tokens_from_env(tmp_path: Path) -> None:
    """With a 3,000-token window (--context-window, or a settings file's CLAUDE_CODE_MAX_CONTEXT_TOKENS)
    a 3,000-word prompt is compacted before the second call; DISABLE_COMPACT=1 sends it whole. Both
    variables were passed over: the window was the model's, the history compacted all the same."""
    prompt = "zebra " * 3000

    def second_call(*args: str) -> int:
        with ScriptedServer([[bash("echo hi")], [text("ok")]]) as srv:
            p = subprocess.run([*loopwright_cmd(), "-p", prompt, "--base-url", srv.url,
                                "--permission-mode", "bypassPermissions", *args], cwd=tmp_path, capture_output=True,
                               text=True, timeout=120, stdin=subprocess.DEVNULL,
                               env=cli_env(HOME=str(tmp_path / "home"), ANTHROPIC_API_KEY="k"))
            assert p.returncode == 0 and len(srv.loop_requests) == 2, p.stderr
            return json.dumps(srv.loop_requests[1].body).count("zebra")

    assert second_call("--context-window", "3000") < 3000  # compacted
    assert second_call("--context-window", "3000", "--settings", settings(tmp_path, {"DISABLE_COMPACT": "1"})) >= 3000
    assert second_call("--settings", settings(tmp_path, {"CLAUDE_CODE_MAX_CONTEXT_TOKENS": "3000"})) < 3000
    assert second_call() >= 3000  # (the model's own window: nothing to compact)


def test_the_provider_from_a_settings_files_env(tmp_path: Path) -> None:
    """A settings file's env with ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY (a gateway set up for Claude
    Code) is where the model is called, with that key (the run stopped on "no API key", and the URL was
    passed over); ANTHROPIC_CUSTOM_HEADERS there, read from the environment only, is named in one line."""
    home = tmp_path / "home"
    with ScriptedServer([[text("via the gateway")]]) as srv:
        env = {"ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "from-settings",
               "ANTHROPIC_CUSTOM_HEADERS": "X-Gateway: yes"}
        p = subprocess.run([*loopwright_cmd(), "-p", "go", "--settings", settings(tmp_path, env)], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                           env=cli_env(HOME=str(home), LOOPWRIGHT_HOME=str(home / ".loopwright")))
        keys = [q.headers.get("x-api-key") for q in srv.loop_requests]
    assert p.returncode == 0 and "via the gateway" in p.stdout, p.stderr
    assert keys == ["from-settings"], keys
    said = [x for x in p.stderr.splitlines() if "ANTHROPIC_CUSTOM_HEADERS" in x]
    assert len(said) == 1 and "settings file's env" in said[0], p.stderr
    assert "ANTHROPIC_BASE_URL" not in p.stderr and "ANTHROPIC_API_KEY" not in p.stderr


def test_one_hour_prompt_caching_from_env(tmp_path: Path) -> None:
    """ENABLE_PROMPT_CACHING_1H=1 marks the cache breakpoints with a one-hour ttl and sends its beta (it
    was refused); FORCE_PROMPT_CACHING_5M=1 over it keeps the 5-minute marks, as unset does."""
    def call(**env: str) -> tuple[str, str]:
        with ScriptedServer([[text("ok")]]) as srv:
            p = run(tmp_path, srv.url, **env)
            q = srv.loop_requests[0]
        assert p.returncode == 0, p.stderr
        return json.dumps(q.body), q.headers.get("anthropic-beta") or ""

    body, beta = call(ENABLE_PROMPT_CACHING_1H="1")
    assert body.count('"ttl": "1h"') >= 1 and "extended-cache-ttl" in beta, (body[-300:], beta)
    for env in ({"ENABLE_PROMPT_CACHING_1H": "1", "FORCE_PROMPT_CACHING_5M": "1"}, {}):
        body, beta = call(**env)
        assert '"cache_control"' in body and '"ttl"' not in body and "extended-cache-ttl" not in beta, env
