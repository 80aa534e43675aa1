"""One reading of usage per provider: for each API (Anthropic Messages, OpenAI chat completions, the
Responses API) a `loopwright -p` run on the loopback server, whose prefix cache makes the later
calls cached, is counted alike by the server (what it answered), the run's JSON result, the
saved session as `loopwright stats --json` and `sessions list` read it, and the OpenTelemetry
chat spans. Before issue 47 the transcript wrote n_k as `input_tokens` beside the cache reads, so
`stats` and `sessions list` counted the cached tokens twice (a run that peaked at n_k 5,773
showed 11,330)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.sessions.summaries import session_info
from loopwright.testing import ScriptedServer
from tests.helpers import cli_env, loopwright_cmd, text, use

pytestmark = pytest.mark.e2e

PROVIDERS = [("claude-sonnet-4-5", ""), ("openai:gpt-4o-mini", "/v1"), ("responses:gpt-5-mini", "/v1")]


def n_k(u: dict[str, Any]) -> int:
    return int(u["input_tokens"]) + int(u.get("cache_read_input_tokens") or 0) + int(
        u.get("cache_creation_input_tokens") or 0)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("model", "suffix"), PROVIDERS, ids=[m.split(":")[0] for m, _ in PROVIDERS])
def test_result_stats_sessions_and_telemetry_agree_with_the_server(tmp_path: Path, model: str, suffix: str) -> None:
    otlp = pytest.importorskip("loopwright.testing.otlp", reason="the otel extra is not installed")
    (tmp_path / "notes.txt").write_text("a line of notes to read\n" * 400)  # big enough to be cached
    turns = [[use(f"t{i}", "Read", file_path="notes.txt")] for i in range(3)] + [[text("read it")]]
    with ScriptedServer(turns, min_cache_tokens=100) as srv, otlp.OtlpReceiver("http/protobuf") as rx:
        env = cli_env(ANTHROPIC_API_KEY="test", OPENAI_API_KEY="test", **rx.env())
        p = subprocess.run([*loopwright_cmd(), "-p", "read notes.txt three times", "--model", model,
                            "--base-url", srv.url + suffix, "--output-format", "json", "--allowedTools", "Read"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        server = [r.usage for r in srv.loop_requests]
        assert rx.wait(lambda x: sum(s.name.startswith("chat ") for s in x.spans) >= 4, 5)
        chats = sorted((s for s in rx.spans if s.name.startswith("chat ")), key=lambda s: s.start_ns)
    assert all(u is not None for u in server) and len(server) == 4
    served: list[dict[str, Any]] = [u for u in server if u is not None]
    assert sum(int(u.get("cache_read_input_tokens") or 0) for u in served) > 0  # the case that was counted twice
    want_n = [n_k(u) for u in served]
    fresh = sum(int(u["input_tokens"]) for u in served)

    result = json.loads(p.stdout)  # the run's own figures
    assert result["usage"]["input_tokens"] == fresh
    assert result["usage"]["cache_read_input_tokens"] == sum(int(u.get("cache_read_input_tokens") or 0) for u in served)
    assert result["usage"]["output_tokens"] == sum(int(u["output_tokens"]) for u in served)
    assert sum(m["inputTokens"] for m in result["modelUsage"].values()) == fresh

    stats = subprocess.run([*loopwright_cmd(), "stats", result["session_id"], "--json"], cwd=tmp_path,
                           env=cli_env(), capture_output=True, text=True, timeout=60)
    assert stats.returncode == 0, stats.stderr
    calls = json.loads(stats.stdout)["calls"]
    assert [c["n_k"] for c in calls] == want_n
    assert [c["input_tokens"] for c in calls] == [u["input_tokens"] for u in served]
    assert json.loads(stats.stdout)["peak_input_tokens"] == max(want_n)

    info = session_info(Path(json.loads(stats.stdout)["path"]))  # what `sessions list` shows
    assert info.peak_input_tokens == max(want_n) and info.input_tokens == fresh

    assert [s.attributes["gen_ai.usage.input_tokens"] for s in chats] == want_n  # OTel: cached input included
    assert [s.attributes["gen_ai.usage.cache_read.input_tokens"] for s in chats] == [
        int(u.get("cache_read_input_tokens") or 0) for u in served]
