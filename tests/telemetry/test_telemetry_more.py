"""OpenTelemetry (telemetry/), the rest of issue 26 proved with the real SDK and exporters sending
to the loopback receiver (loopwright.testing.otlp): `loopwright batch` turned on by the user
settings' `env` alone (locally and on a local Ray), the http/json protocol, the GenAI metric
names and units, a refused call, TRACEPARENT in, and no content anywhere by default."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import cli_env, loopwright_cmd, text, use

pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed (pip install 'loopwright[otel]')")
from loopwright.testing.otlp import OtlpReceiver  # noqa: E402

pytestmark = pytest.mark.e2e

MODEL = "claude-sonnet-4-5"
CI_TRACE, CI_SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


def no_otel_env(**extra: str) -> dict[str, str]:
    """A subprocess's environment with no OTEL_* variable of the caller's, plus `extra`."""
    env = {k: v for k, v in cli_env().items() if not k.startswith(("OTEL_", "TRACEPARENT", "TRACESTATE"))}
    return {**env, **extra}


def user_settings(tmp: Path, data: dict[str, object]) -> Path:
    home = tmp / "lwhome"
    home.mkdir(exist_ok=True)
    (home / "settings.json").write_text(json.dumps(data))
    return home


# one Ray at a time (tests/batching/test_batch.py: ON_RAY)
@pytest.mark.parametrize("executor", ["local", pytest.param("ray", marks=pytest.mark.xdist_group("ray"))])
def test_batch_turned_on_by_the_user_settings_env_has_its_span_over_one_subtree_per_task(
        tmp_path: Path, executor: str) -> None:
    if executor == "ray":
        pytest.importorskip("ray", reason="Ray is not installed (pip install 'loopwright[ray]')")
    tasks = tmp_path / "tasks.jsonl"
    for d in "ab":
        (tmp_path / d).mkdir()
    tasks.write_text("".join(json.dumps({"id": d, "prompt": "task " + d, "cwd": str(tmp_path / d)}) + "\n"
                             for d in "ab"))
    with ScriptedServer(lambda h: [text("done " + h[0]["content"][-1]["text"])]) as srv, OtlpReceiver() as rx:
        home = user_settings(tmp_path, {"env": {**rx.env(metrics=False), "OTEL_SERVICE_NAME": "batch-from-settings"}})
        env = no_otel_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="k", LOOPWRIGHT_HOME=str(home),
                          RAY_AUTH_MODE="disabled", TRACEPARENT=f"00-{CI_TRACE}-{CI_SPAN}-01")  # a CI job's span
        flags = ["--ray"] if executor == "ray" else []
        r = subprocess.run([*loopwright_cmd(), "batch", str(tasks), "-o", str(tmp_path / "out.jsonl"), "--model", MODEL,
                            "--concurrency", "2", *flags], env=env, cwd=tmp_path, capture_output=True, text=True,
                           timeout=150)
        assert r.returncode == 0, r.stderr[-3000:]
        # the driver flushed at exit and each worker after its task: all is there, or soon
        assert rx.wait(lambda x: len(x.named("invoke_agent")) == 2 and len(x.named("invoke_workflow")) == 1, 10), \
            [s.name for s in rx.spans]
    results = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert sorted((x["id"], x["subtype"]) for x in results) == [("a", "success"), ("b", "success")]
    batch_span = rx.named("invoke_workflow batch")[0]
    assert (batch_span.trace_id, batch_span.parent_id) == (CI_TRACE, CI_SPAN)  # TRACEPARENT in: the CI job's child
    assert batch_span.attributes["loopwright.batch.tasks"] == 2
    assert batch_span.resource["service.name"] == "batch-from-settings"
    tasks_by_id = {s.attributes["loopwright.batch.task.id"]: s for s in rx.named("task ")}
    assert set(tasks_by_id) == {"a", "b"}
    assert all(t.parent_id == batch_span.span_id and t.trace_id == batch_span.trace_id for t in tasks_by_id.values())
    pids = {t.attributes["loopwright.pid"] for t in tasks_by_id.values()}
    if executor == "ray":  # the tasks ran in Ray's workers, not in the driver
        assert batch_span.attributes["loopwright.pid"] not in pids
        assert all(t.resource["service.name"] == "batch-from-settings" for t in tasks_by_id.values())
    else:
        assert pids == {batch_span.attributes["loopwright.pid"]}
    runs = rx.named("invoke_agent")
    assert sorted(r.parent_id for r in runs) == sorted(t.span_id for t in tasks_by_id.values())
    chats = rx.named("chat ")
    assert len(chats) == 2 and {c.parent_id for c in chats} == {r.span_id for r in runs}
    by_task = {t.span_id: k for k, t in tasks_by_id.items()}
    for run in runs:  # each task's run is the session of its own result line
        result = next(x for x in results if x["id"] == by_task[run.parent_id])
        assert run.attributes["gen_ai.conversation.id"] == result["session_id"]


def test_http_json_without_its_extra_is_one_warning_line_and_the_other_signals_still_go(tmp_path: Path) -> None:
    code = ("import sys\n"
            "sys.modules['opentelemetry.exporter.otlp.json'] = None  # as if otel-json were not installed\n"
            "from loopwright.cli import main\n"
            "sys.exit(main(['-p', 'hi', '--model', 'scripted:" + str(tmp_path / "s.json") + "']))\n")
    (tmp_path / "s.json").write_text(json.dumps([[text("ok")]]))
    with OtlpReceiver() as rx:
        env = no_otel_env(**{**rx.env(), "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
                             "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/protobuf"})  # per signal: metrics as protobuf
        r = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
        assert rx.wait(lambda x: bool(x.points), 5)
    lines = [line for line in r.stderr.splitlines() if "telemetry" in line or "Traceback" in line]
    assert len(lines) == 1 and "http/json" in lines[0] and 'pip install "loopwright[otel-json]"' in lines[0], r.stderr
    assert "traces not exported" in lines[0]
    assert rx.spans == [] and rx.content_types == {"application/x-protobuf"}


APP_WITH_VARIABLES = r'''
import sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
import loopwright as lw

url, app_endpoint = sys.argv[1:3]
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=app_endpoint + "/v1/traces")))
trace.set_tracer_provider(provider)  # the application's own pipeline, while OTEL_* point elsewhere
with trace.get_tracer("app").start_as_current_span("handle request"):
    r = lw.run("go", lw.AgentOptions(model="claude-sonnet-4-5", base_url=url, api_key="k", tools=[]))
print(r.subtype)
provider.shutdown()
'''


def test_an_apps_own_tracer_provider_takes_the_runs_spans_even_with_otel_variables_set(tmp_path: Path) -> None:
    script = tmp_path / "app.py"
    script.write_text(APP_WITH_VARIABLES)
    with ScriptedServer([[text("ok")]]) as srv, OtlpReceiver() as app_rx, OtlpReceiver() as env_rx:
        r = subprocess.run([sys.executable, str(script), srv.url, app_rx.endpoint], env=no_otel_env(**env_rx.env()),
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stdout.strip() == "success", r.stderr
        assert app_rx.wait(lambda x: any(s.name == "handle request" for s in x.spans), 5)
        env_rx.wait(lambda x: x.requests > 0, 1)  # (nothing should come: a second pipeline would)
    app = app_rx.named("handle request")[0]
    run = app_rx.named("invoke_agent loopwright")[0]
    assert run.parent_id == app.span_id and app_rx.named("chat ")[0].parent_id == run.span_id
    assert env_rx.spans == []  # no second pipeline of loopwright's own beside the application's


def test_a_per_signal_endpoint_headers_and_resource_attributes_are_the_exporters(tmp_path: Path) -> None:
    with ScriptedServer([[text("ok")]]) as srv, OtlpReceiver() as rx:
        env = no_otel_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="k",  # no OTEL_*_EXPORTER: the endpoint says otlp
                          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=rx.endpoint + "/v1/traces",
                          OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer%20tok,x-tenant=t1",
                          OTEL_RESOURCE_ATTRIBUTES="deployment.environment.name=ci,service.name=agents")
        r = subprocess.run([*loopwright_cmd(), "-p", "hi", "--model", MODEL], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert rx.named("invoke_agent")  # flushed before -p exited
        rx.wait(lambda x: bool(x.points), 1)
    run = rx.named("invoke_agent")[0]
    assert run.resource["service.name"] == "agents" and run.resource["deployment.environment.name"] == "ci"
    assert rx.headers["authorization"] == "Bearer tok" and rx.headers["x-tenant"] == "t1"
    assert rx.points == []  # only traces had an endpoint: metrics were not asked for


def test_off_neither_p_nor_batch_imports_opentelemetry(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps([[text("ok")], [text("ok")]]))
    (tmp_path / "t").mkdir()
    (tmp_path / "tasks.jsonl").write_text(json.dumps({"id": "a", "prompt": "p", "cwd": str(tmp_path / "t")}) + "\n")
    code = ("import sys\n"
            "from loopwright.cli import main\n"
            "model = 'scripted:" + str(tmp_path / "s.json") + "'\n"
            "assert main(['-p', 'hi', '--model', model]) == 0\n"
            "assert main(['batch', 'tasks.jsonl', '-o', 'out.jsonl', '--model', model]) == 0\n"
            "print(sorted(m for m in sys.modules if m.startswith('opentelemetry') or m.endswith('_otel')))\n")
    r = subprocess.run([sys.executable, "-c", code], env=no_otel_env(), cwd=tmp_path, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "[]"
    assert json.loads((tmp_path / "out.jsonl").read_text())["subtype"] == "success"


HOSTILE = r'''
import sys
import loopwright as lw

url, cwd = sys.argv[1:3]

def gate(name, tool_input):  # the application's ask: Write yes, Bash no
    return lw.Allow() if name == "Write" else lw.Deny("not here")

r = lw.run("SECRET-PROMPT-44aa", lw.AgentOptions(model="claude-sonnet-4-5", base_url=url, api_key="k", cwd=cwd,
                                                 can_use_tool=gate, tools=["Read", "Write", "Bash"]))
print(r.subtype)
'''

SECRETS = ("SECRET-PROMPT-44aa", "SECRET-FILE-CONTENT-7f3a", "SECRET-WRITE-ARG-91c2", "SECRET-BASH-ARG-5d1e",
           "SECRET-ANSWER-0b6f", "secret.txt", "notes.txt")


def everything(rx: OtlpReceiver) -> str:
    """Every name, attribute, event and resource the collector got, as one string."""
    parts: list[object] = [[s.name, s.attributes, s.events, s.resource] for s in rx.spans]
    parts += [[p.metric, p.attributes] for p in rx.points] + [[e.event_name, e.attributes] for e in rx.logs]
    return json.dumps(parts, default=str)


def test_no_prompt_file_content_tool_argument_or_answer_leaves_without_the_opt_in(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("SECRET-FILE-CONTENT-7f3a\n")
    turns = [[use("r1", "Read", file_path=str(tmp_path / "secret.txt"))],
             [use("w1", "Write", file_path=str(tmp_path / "notes.txt"), content="SECRET-WRITE-ARG-91c2")],
             [use("b1", "Bash", command="echo SECRET-BASH-ARG-5d1e")],
             [text("SECRET-ANSWER-0b6f")]]
    script = tmp_path / "hostile.py"
    script.write_text(HOSTILE)
    with ScriptedServer(turns) as srv, OtlpReceiver() as rx:
        env = no_otel_env(**rx.env(metrics=True, logs=True))  # a logs exporter, but no opt-in to content
        r = subprocess.run([sys.executable, str(script), srv.url, str(tmp_path)], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stdout.strip() == "success", r.stderr
        assert rx.wait(lambda x: bool(x.named("invoke_agent")) and bool(x.points), 5)
        sent = srv.loop_requests[-1].body["messages"]
    assert "SECRET-FILE-CONTENT-7f3a" in json.dumps(sent)  # the model did see the file: the run read it
    assert (tmp_path / "notes.txt").read_text() == "SECRET-WRITE-ARG-91c2"
    dumped = everything(rx)
    assert [s for s in SECRETS if s in dumped] == []
    assert rx.logs == []  # no content events at all
    tools = {s.attributes["gen_ai.tool.call.id"]: s.attributes for s in rx.named("execute_tool ")}
    assert (tools["r1"]["loopwright.permission.decision"], tools["r1"]["loopwright.permission.via"]) == ("allow", "rules")
    assert (tools["w1"]["loopwright.permission.decision"], tools["w1"]["loopwright.permission.via"]) == ("allow", "ask")
    assert (tools["b1"]["loopwright.permission.decision"], tools["b1"]["loopwright.permission.via"]) == ("deny", "ask")
    assert tools["b1"]["loopwright.tool.is_error"] is True and tools["w1"]["loopwright.tool.is_error"] is False


def test_metrics_are_named_and_measured_as_the_genai_conventions_say(tmp_path: Path) -> None:
    turns = [{"content": [text("ok")], "usage": {"input_tokens": 40, "output_tokens": 6}}]
    with ScriptedServer(turns) as srv, OtlpReceiver() as rx:
        r = subprocess.run([*loopwright_cmd(), "-p", "hi", "--model", MODEL], cwd=tmp_path, capture_output=True,
                           text=True, timeout=60,
                           env=no_otel_env(**rx.env(), ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="k"))
        assert r.returncode == 0, r.stderr
        assert rx.wait(lambda x: len(x.points) >= 4, 5)
    units = {p.metric: p.unit for p in rx.points}
    assert units == {"gen_ai.client.token.usage": "{token}", "gen_ai.client.operation.duration": "s",
                     "loopwright.cost.usage": "USD"}
    port = int(srv.url.rsplit(":", 1)[1].split("/")[0])
    for p in rx.points:  # Required and Conditionally Required attributes (server.port: server.address is set)
        a = p.attributes
        assert a["gen_ai.operation.name"] == "chat" and a["gen_ai.provider.name"] == "anthropic", a
        assert a["gen_ai.request.model"] == MODEL and a["server.address"] == "127.0.0.1" and a["server.port"] == port
    tokens = {p.attributes["gen_ai.token.type"]: p.value for p in rx.points if p.metric == "gen_ai.client.token.usage"}
    assert set(tokens) == {"input", "output"} and tokens["output"] == 6
    assert all(not k.startswith("gen_ai.usage") for p in rx.points for k in p.attributes)  # counts are values


def test_a_collector_that_never_answers_costs_at_most_the_bounded_flush_and_one_line(tmp_path: Path) -> None:
    import socket
    import time

    with socket.socket() as hang, ScriptedServer([[text("ok")], [text("ok")]]) as srv:
        hang.bind(("127.0.0.1", 0))
        hang.listen(64)  # connections are made (the kernel's backlog) but no byte ever comes back
        env = {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "otlp",
               "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{hang.getsockname()[1]}"}
        times = []
        for extra in ({}, env):
            t0 = time.monotonic()
            r = subprocess.run([*loopwright_cmd(), "-p", "hi", "--model", MODEL], cwd=tmp_path, capture_output=True,
                               text=True, timeout=60,
                               env=no_otel_env(**extra, ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="k"))
            times.append(time.monotonic() - t0)
            assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
    warnings = [line for line in r.stderr.splitlines() if "telemetry" in line or "Traceback" in line]
    assert len(warnings) == 1 and "did not take the spans within 2 s" in warnings[0], r.stderr
    # the exit flush is bounded (2 s), not the exporters' 10 s and retries (the margin: two runs of a
    # CLI on a loaded machine can differ by seconds on their own)
    assert times[1] - times[0] < 8.0, times


def test_an_untrusted_workspace_cannot_turn_telemetry_on_or_send_it_elsewhere(tmp_path: Path) -> None:
    ws = tmp_path / "cloned-repo"
    (ws / ".loopwright").mkdir(parents=True)
    with ScriptedServer(lambda h: [text("ok")]) as srv, OtlpReceiver() as rx:
        (ws / ".loopwright" / "settings.json").write_text(json.dumps({"env": {**rx.env(), "TRACEPARENT": "x"}}))
        base = {k: v for k, v in no_otel_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="k",
                                             HOME=str(tmp_path / "home"),
                                             LOOPWRIGHT_HOME=str(tmp_path / "home" / ".loopwright")).items()
                if k != "LOOPWRIGHT_TRUSTED_DIRS"}
        runs = {}
        for trusted in (False, True):  # the same workspace once trusted: the control
            env = {**base, **({"LOOPWRIGHT_TRUSTED_DIRS": str(ws)} if trusted else {})}
            runs[trusted] = subprocess.run([*loopwright_cmd(), "-p", "hi", "--model", MODEL], env=env, cwd=ws,
                                           capture_output=True, text=True, timeout=60)
            assert runs[trusted].returncode == 0, runs[trusted].stderr
            if not trusted:
                rx.wait(lambda x: x.requests > 0, 1)
                assert rx.requests == 0  # nothing was sent where the workspace said
        assert rx.named("invoke_agent")
    assert "env OTEL_TRACES_EXPORTER" in runs[False].stderr  # the user is told what was left out


def test_a_failed_model_call_is_an_error_span_and_its_duration_has_the_error_type(tmp_path: Path) -> None:
    from loopwright.testing import Fault

    with ScriptedServer([[text("ok")]]) as srv, OtlpReceiver() as rx:
        srv.inject(Fault.error(400, "temperature: SECRET-ERR-3e1d is not a number", error_type="invalid_request_error"))
        r = subprocess.run([*loopwright_cmd(), "-p", "hi", "--model", MODEL, "--output-format", "json"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60,
                           env=no_otel_env(**rx.env(), ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="k"))
        assert rx.wait(lambda x: bool(x.named("invoke_agent")) and bool(x.points), 5)
    out = json.loads(r.stdout)
    assert out["is_error"] and "SECRET-ERR-3e1d" in json.dumps(out)  # the user is told; the collector is not
    chat = rx.named("chat ")[0]
    assert chat.status == 2 and chat.attributes["error.type"] == "400"
    run = rx.named("invoke_agent")[0]
    assert run.status == 2 and run.attributes["error.type"] == out["subtype"]
    duration = next(p for p in rx.points if p.metric == "gen_ai.client.operation.duration")
    assert duration.attributes["error.type"] == "400" and duration.count == 1
    assert "SECRET-ERR-3e1d" not in everything(rx)
