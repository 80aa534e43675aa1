"""OpenTelemetry (telemetry/): the real SDK and OTLP exporters send to a loopback receiver that
decodes with opentelemetry-proto (loopwright.testing.otlp); the span tree, parents, attributes
and usage are checked against what the loopback Messages server was scripted to report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import TESTS, cli_env, held_port, loopwright_cmd, text, use

pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed (pip install 'loopwright[otel]')")
from loopwright.testing.otlp import OtlpReceiver, Span  # noqa: E402

pytestmark = pytest.mark.e2e

U1 = {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 7, "cache_creation_input_tokens": 5}
U2 = {"input_tokens": 150, "output_tokens": 3}


def n_k(u: dict[str, int]) -> int:
    return u["input_tokens"] + u.get("cache_read_input_tokens", 0) + u.get("cache_creation_input_tokens", 0)


def run_p(srv: ScriptedServer, rx_env: dict[str, str], cwd: Path, *args: str, prompt: str = "fix it",
          **env: str) -> subprocess.CompletedProcess[str]:
    e = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="test", **rx_env, **env)
    return subprocess.run([*loopwright_cmd(), "-p", prompt, "--model", "claude-sonnet-4-5", "--output-format", "json",
                           *args], cwd=cwd, env=e, capture_output=True, text=True, timeout=120)


def by_id(spans: list[Span]) -> dict[str, Span]:
    return {s.span_id: s for s in spans}


def has_root(rx: OtlpReceiver) -> bool:
    return any(s.name == "invoke_agent loopwright" for s in rx.spans)


def attribute_values(spans: list[Span]) -> str:
    return json.dumps([s.attributes for s in spans] + [e for s in spans for e in s.events], default=str)


@pytest.mark.parametrize("protocol", ["http/protobuf", "http/json", "grpc"])
def test_print_mode_exports_the_genai_span_tree_with_usage(tmp_path: Path, protocol: str) -> None:
    if protocol == "grpc":
        pytest.importorskip("grpc", reason="grpcio is not installed: the grpc receiver cannot start")
    if protocol == "http/json":
        pytest.importorskip("opentelemetry.exporter.otlp.json.http", reason="the otel-json extra is not installed")
    turns = [{"content": [use("t1", "Bash", command="echo TP=$TRACEPARENT")], "usage": U1},
             {"content": [text("done")], "usage": U2}]
    with ScriptedServer(turns) as srv, OtlpReceiver(protocol) as rx:
        r = run_p(srv, rx.env(), tmp_path, "--allowedTools", "Bash")
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        # -p flushed before it exited: everything is there already
        assert has_root(rx), rx.spans
        bash_result = srv.loop_requests[1].body["messages"][-1]["content"][0]
        assert rx.wait(lambda x: len(x.points) >= 4, 5)
    spans = rx.spans
    root = next(s for s in spans if s.name == "invoke_agent loopwright")
    assert root.parent_id == "" and root.attributes["gen_ai.conversation.id"] == out["session_id"]
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["loopwright.result.subtype"] == "success"
    assert root.attributes["loopwright.cost_usd"] == pytest.approx(out["total_cost_usd"])
    assert root.resource["service.name"] == "loopwright"
    chats = sorted((s for s in spans if s.name == "chat claude-sonnet-4-5"), key=lambda s: s.start_ns)
    tools = [s for s in spans if s.name.startswith("execute_tool")]
    assert len(chats) == 2 and len(tools) == 1 and len(spans) == 4
    assert {s.trace_id for s in spans} == {root.trace_id}
    assert all(s.parent_id == root.span_id for s in [*chats, *tools])
    assert chats[0].end_ns <= tools[0].start_ns and tools[0].end_ns <= chats[1].start_ns  # the loop's order
    for chat, u, reason, k in ((chats[0], U1, "tool_use", 1), (chats[1], U2, "end_turn", 2)):
        a = chat.attributes
        assert chat.kind == 3  # CLIENT
        assert a["gen_ai.provider.name"] == "anthropic" and a["gen_ai.operation.name"] == "chat"
        assert a["gen_ai.request.model"] == a["gen_ai.response.model"] == "claude-sonnet-4-5"
        assert a["gen_ai.usage.input_tokens"] == a["loopwright.n_k"] == n_k(u)
        assert a["gen_ai.usage.output_tokens"] == u["output_tokens"]
        assert a["gen_ai.usage.cache_read.input_tokens"] == u.get("cache_read_input_tokens", 0)
        assert a["gen_ai.usage.cache_creation.input_tokens"] == u.get("cache_creation_input_tokens", 0)
        assert a["gen_ai.response.finish_reasons"] == [reason] and a["loopwright.call.index"] == k
        assert a["loopwright.retries"] == 0 and a["server.address"] == "127.0.0.1"
    assert sum(c.attributes["loopwright.cost_usd"] for c in chats) == pytest.approx(out["total_cost_usd"])
    t = tools[0].attributes
    assert t["gen_ai.tool.name"] == "Bash" and t["gen_ai.tool.call.id"] == "t1" and tools[0].status != 2
    assert t["loopwright.permission.decision"] == "allow" and t["loopwright.permission.via"] == "rules"
    assert t["loopwright.tool.sandboxed"] is False and t["loopwright.tool.is_error"] is False
    # trace context out: the Bash command saw its own execute_tool span as TRACEPARENT
    assert f"TP=00-{root.trace_id}-{tools[0].span_id}-0" in bash_result["content"]  # flags: sampled (+random)
    # no content by default: neither the command nor the prompt nor the output
    dumped = attribute_values(spans)
    assert "TRACEPARENT" not in dumped and "fix it" not in dumped and "done" not in dumped
    # metrics: token usage by type and the cost, as reported
    tokens = {p.attributes["gen_ai.token.type"]: p for p in rx.points if p.metric == "gen_ai.client.token.usage"}
    assert tokens["input"].value == n_k(U1) + n_k(U2) and tokens["input"].count == 2
    assert tokens["output"].value == U1["output_tokens"] + U2["output_tokens"]
    cost = [p for p in rx.points if p.metric == "loopwright.cost.usage"]
    assert cost[0].value == pytest.approx(out["total_cost_usd"]) and cost[0].unit == "USD"
    duration = [p for p in rx.points if p.metric == "gen_ai.client.operation.duration"]
    assert duration[0].count == 2 and duration[0].unit == "s"
    if protocol.startswith("http/"):  # the body as the protocol says (the JSON exporter, not protobuf's)
        assert rx.content_types == {"application/json" if protocol == "http/json" else "application/x-protobuf"}


def test_traceparent_in_the_environment_makes_the_run_its_child(tmp_path: Path) -> None:
    parent_trace, parent_span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    with ScriptedServer([[text("ok")]]) as srv, OtlpReceiver() as rx:
        r = run_p(srv, rx.env(metrics=False), tmp_path, TRACEPARENT=f"00-{parent_trace}-{parent_span}-01",
                  OTEL_SERVICE_NAME="ci-agent")
        assert r.returncode == 0, r.stderr
        assert has_root(rx)
    root = next(s for s in rx.spans if s.name == "invoke_agent loopwright")
    assert (root.trace_id, root.parent_id) == (parent_trace, parent_span)
    assert root.resource["service.name"] == "ci-agent"


def test_a_refused_call_is_an_error_span_with_the_gates_decision(tmp_path: Path) -> None:
    secret = "cat /etc/shadow-but-secret-arg"
    turns = [[use("t1", "Bash", command=secret)], [text("could not")]]
    with ScriptedServer(turns) as srv, OtlpReceiver() as rx:
        r = run_p(srv, rx.env(metrics=False), tmp_path)  # no rule allows Bash; -p cannot ask
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert has_root(rx)
    assert out["permission_denials"][0]["tool_name"] == "Bash"
    tool = next(s for s in rx.spans if s.name == "execute_tool Bash")
    a = tool.attributes
    assert tool.status == 2 and a["error.type"] == "tool_error" and a["loopwright.tool.is_error"] is True
    assert a["loopwright.permission.decision"] == "deny" and a["loopwright.permission.via"] == "ask"
    assert a["loopwright.permission.rules"] == "ask"
    assert secret not in attribute_values(rx.spans)  # no tool arguments without the opt-in


def test_content_is_exported_only_when_opted_in(tmp_path: Path) -> None:
    turns = [[use("t1", "Bash", command="echo secret-output")], [text("the answer")]]
    with ScriptedServer(turns) as srv, OtlpReceiver() as rx:
        r = run_p(srv, rx.env(metrics=False, logs=True), tmp_path, "--allowedTools", "Bash", prompt="my prompt",
                  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
        assert r.returncode == 0, r.stderr
        assert has_root(rx) and rx.wait(lambda x: len(x.logs) >= 2, 5)
    tool = next(s for s in rx.spans if s.name == "execute_tool Bash")
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {"command": "echo secret-output"}
    assert "secret-output" in tool.attributes["gen_ai.tool.call.result"]
    events = [e for e in rx.logs if e.event_name == "gen_ai.client.inference.operation.details"]
    assert len(events) == 2
    chats = {s.span_id: s for s in rx.spans if s.name.startswith("chat ")}
    assert {e.span_id for e in events} == set(chats)  # each event belongs to its chat span
    assert "my prompt" in events[0].attributes["gen_ai.input.messages"]
    last = json.loads(next(e for e in events if "the answer" in e.attributes["gen_ai.output.messages"])
                      .attributes["gen_ai.output.messages"])
    assert last[0]["finish_reason"] == "end_turn"


def test_an_unreachable_collector_neither_slows_nor_fails_the_run(tmp_path: Path) -> None:
    # a port nobody listens on, held for the test (no other worker's server can take it meanwhile)
    with held_port() as dead, ScriptedServer([[text("ok")], [text("ok")]]) as srv:
        env = {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "otlp",
               "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{dead}"}
        t0 = time.monotonic()
        off = run_p(srv, {}, tmp_path)
        t_off = time.monotonic() - t0
        t0 = time.monotonic()
        r = run_p(srv, env, tmp_path)
        t_on = time.monotonic() - t0
    assert off.returncode == 0 and r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["subtype"] == "success"
    warnings = [line for line in r.stderr.splitlines() if "telemetry" in line]
    assert len(warnings) == 1 and "export failed" in warnings[0], r.stderr
    assert "Traceback" not in r.stderr
    # at most the bounded flush at exit (2 s), not the exporters' 10 s of retries (the margin: two
    # runs of a CLI on a loaded machine can differ by seconds on their own)
    assert t_on - t_off < 8.0, (t_on, t_off)


APP = r'''
import sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
import loopwright as lw
from loopwright.agents import GENERAL_PURPOSE

url, endpoint, cwd = sys.argv[1:4]
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint + "/v1/traces")))
trace.set_tracer_provider(provider)  # the application's own tracing, no OTEL_* variables
with trace.get_tracer("app").start_as_current_span("handle request"):
    r = lw.run("delegate it", lw.AgentOptions(model="claude-sonnet-4-6", base_url=url, api_key="k", cwd=cwd,
                                              agents={"x": GENERAL_PURPOSE}, tools=[]))
print(r.subtype, r.session_id, r.subagent_call_usage[0].input_tokens, r.subagent_call_usage[0].output_tokens)
provider.shutdown()
'''


def test_python_api_inside_the_apps_span_with_a_subagent_under_the_agent_tool(tmp_path: Path) -> None:
    def fn(h: list[dict[str, Any]]) -> Any:
        first = h[0]["content"][-1]["text"]
        done = sum(1 for m in h if m["role"] == "assistant")
        if first == "delegate it":
            return [[use("a1", "Agent", description="sub task", prompt="count")], [text("parent done")]][done]
        return [text("sub done")]

    script = tmp_path / "app.py"
    script.write_text(APP)
    with ScriptedServer(fn, min_cache_tokens=0) as srv, OtlpReceiver() as rx:
        env = cli_env()
        env = {k: v for k, v in env.items() if not k.startswith("OTEL_")}
        r = subprocess.run([sys.executable, str(script), srv.url, rx.endpoint, str(tmp_path)], env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert r.stdout.split()[0] == "success"
        assert rx.wait(lambda x: any(s.name == "handle request" for s in x.spans), 5)
    spans = by_id(rx.spans)
    app = next(s for s in rx.spans if s.name == "handle request")
    root = next(s for s in rx.spans if s.name == "invoke_agent loopwright")
    agent_tool = next(s for s in rx.spans if s.name == "execute_tool Agent")
    sub = next(s for s in rx.spans if s.name.startswith("invoke_agent ") and s is not root)
    assert root.parent_id == app.span_id and root.attributes["gen_ai.conversation.id"] == r.stdout.split()[1]
    assert agent_tool.parent_id == root.span_id
    assert sub.parent_id == agent_tool.span_id  # the subagent nested under the Agent tool's span
    assert sub.attributes["gen_ai.agent.name"] == "general-purpose"
    sub_chat = next(s for s in rx.spans if s.parent_id == sub.span_id and s.name.startswith("chat "))
    sub_n_k, sub_out = map(int, r.stdout.split()[2:4])  # the subagent's call as the run accounted it
    assert sub_chat.attributes["gen_ai.usage.input_tokens"] == sub_n_k
    assert sub_chat.attributes["gen_ai.usage.output_tokens"] == sub_out
    assert {s.trace_id for s in spans.values()} == {app.trace_id}
    assert len([s for s in rx.spans if s.name.startswith("chat ")]) == 3


BATCH = r'''
import asyncio, json, os, sys
import ray
import loopwright as lw
from loopwright.batching import RayExecutor, batch

url, cwd = sys.argv[1:3]
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False,
         runtime_env={"env_vars": {"ANTHROPIC_API_KEY": "k"}})

async def main():
    for d in "ab":
        os.makedirs(os.path.join(cwd, d), exist_ok=True)
    tasks = [{"id": d, "prompt": "task " + d, "cwd": os.path.join(cwd, d)} for d in "ab"]
    opts = lw.AgentOptions(model="claude-sonnet-4-6", base_url=url, cwd=cwd, tools=[])
    return [r async for r in batch(tasks, opts, executor=RayExecutor(), concurrency=2)]

out = asyncio.run(main())
print(json.dumps([[r["id"], r["subtype"], r["worker"]] for r in out]))
'''


@pytest.mark.xdist_group("ray")  # one Ray at a time (tests/batching/test_batch.py: ON_RAY)
def test_a_batch_on_ray_one_task_span_each_under_the_batch_span(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'loopwright[ray]')")
    script = tmp_path / "batch.py"
    script.write_text(BATCH)
    with ScriptedServer(lambda h: [text("done " + h[0]["content"][-1]["text"])]) as srv, OtlpReceiver() as rx:
        env = cli_env(**rx.env(metrics=False))
        r = subprocess.run([sys.executable, str(script), srv.url, str(tmp_path)], env=env,
                           capture_output=True, text=True, timeout=100)
        assert r.returncode == 0, r.stderr[-3000:]
        results = json.loads(r.stdout.strip().splitlines()[-1])
        assert rx.wait(lambda x: len(x.named("invoke_agent")) == 2 and len(x.named("invoke_workflow")) == 1, 10)
    assert [x[1] for x in results] == ["success", "success"]
    batch_span = rx.named("invoke_workflow batch")[0]
    assert batch_span.parent_id == "" and batch_span.attributes["loopwright.batch.tasks"] == 2
    tasks = {s.attributes["loopwright.batch.task.id"]: s for s in rx.named("task ")}
    assert set(tasks) == {"a", "b"}
    assert all(t.parent_id == batch_span.span_id and t.trace_id == batch_span.trace_id for t in tasks.values())
    assert all(t.attributes["loopwright.pid"] != os.getpid() for t in tasks.values())  # from Ray's workers
    runs = rx.named("invoke_agent")
    assert {r.parent_id for r in runs} == {t.span_id for t in tasks.values()}
    chats = rx.named("chat ")
    assert len(chats) == 2 and {c.parent_id for c in chats} == {r.span_id for r in runs}


def test_off_no_opentelemetry_module_is_imported(tmp_path: Path) -> None:
    code = ("import sys, loopwright as lw\n"
            "from loopwright.models.scripted import ScriptedModel\n"
            "r = lw.run('hi', lw.AgentOptions(model=ScriptedModel([[{'type': 'text', 'text': 'ok'}]])))\n"
            "assert r.subtype == 'success', r\n"
            "print(sorted(m for m in sys.modules if m.startswith('opentelemetry') or m.endswith('_otel')))\n")
    env = {k: v for k, v in cli_env().items() if not k.startswith("OTEL_")}
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
    v = subprocess.run([sys.executable, "-X", "importtime", "-c", "from loopwright.cli import main; main(['--version'])"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert v.returncode == 0 and "opentelemetry" not in v.stderr and "telemetry" not in v.stderr


def test_without_the_extra_a_one_line_error_names_it(tmp_path: Path) -> None:
    code = ("import sys\n"
            "sys.modules['opentelemetry'] = None  # as if the otel extra were not installed\n"
            "from loopwright.cli import main\n"
            "sys.exit(main(['-p', 'hi', '--model', 'scripted:" + str(tmp_path / "s.json") + "']))\n")
    (tmp_path / "s.json").write_text(json.dumps([[text("ok")]]))
    env = cli_env(OTEL_TRACES_EXPORTER="otlp")
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and 'pip install "loopwright[otel]"' in lines[0], r.stderr


MCP_SERVER = r'''
import json
import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(name="meta", description="The request's _meta.",
                                                   input_schema={"type": "object", "properties": {}})])

async def call_tool(ctx, params):
    meta = params.model_dump(by_alias=True, exclude_none=True).get("_meta") or {}
    return types.CallToolResult(content=[types.TextContent(text=json.dumps(meta, default=str))])

async def main():
    server = Server("meta-server", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
'''


def test_hooks_and_mcp_calls_carry_the_trace_context(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    server = tmp_path / "meta_server.py"
    server.write_text(MCP_SERVER)
    mcp = json.dumps({"mcpServers": {"m": {"command": sys.executable, "args": [str(server)]}}})
    hooks = json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": 'echo "$TRACEPARENT" > hook_tp.txt'}]}]}})
    turns = [[use("t1", "mcp__m__meta")], [use("t2", "Bash", command="true")], [text("done")]]
    with ScriptedServer(turns) as srv, OtlpReceiver() as rx:
        r = run_p(srv, rx.env(metrics=False), tmp_path, "--mcp-config", mcp, "--strict-mcp-config",
                  "--allowedTools", "mcp__m__meta", "--allowedTools", "Bash", "--settings", hooks)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["subtype"] == "success", r.stdout
        meta_result = srv.loop_requests[1].body["messages"][-1]["content"][0]
        assert has_root(rx)
    root = next(s for s in rx.spans if s.name == "invoke_agent loopwright")
    mcp_span = next(s for s in rx.spans if s.name == "execute_tool mcp__m__meta")
    assert mcp_span.attributes["loopwright.mcp.server"] == "m"
    assert mcp_span.attributes["mcp.method.name"] == "tools/call"
    assert mcp_span.attributes["gen_ai.tool.type"] == "extension"
    content = meta_result["content"]
    meta = json.loads(content if isinstance(content, str) else content[0]["text"])
    assert meta["traceparent"].startswith(f"00-{root.trace_id}-{mcp_span.span_id}-")  # params._meta
    bash_span = next(s for s in rx.spans if s.name == "execute_tool Bash")
    hook = next(s for s in rx.spans if s.name == "hook PreToolUse")
    assert hook.parent_id == bash_span.span_id and hook.attributes["loopwright.hook.count"] == 1
    assert (tmp_path / "hook_tp.txt").read_text().startswith(f"00-{root.trace_id}-{hook.span_id}-")


RETRY = r'''
import sys
import loopwright as lw
url = sys.argv[1]
r = lw.run("go", lw.AgentOptions(model="claude-opus-4-7", fallback_model=["claude-sonnet-4-5"], max_retries=1,
                                 base_url=url, api_key="k", tools=[]))
print(r.subtype)
'''


def test_retries_and_the_fallback_model_are_on_the_chat_span(tmp_path: Path) -> None:
    from loopwright.testing import Fault

    script = tmp_path / "retry.py"
    script.write_text(RETRY)
    with ScriptedServer([[text("ok")]], min_cache_tokens=0) as srv, OtlpReceiver() as rx:
        srv.inject(Fault.overloaded(times=100, model="claude-opus-4-7"))
        r = subprocess.run([sys.executable, str(script), srv.url], env=cli_env(**rx.env(metrics=False)),
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stdout.strip() == "success", r.stderr
        statuses = [(q.body["model"], q.status) for q in srv.loop_requests]
        assert has_root(rx)
    assert statuses == [("claude-opus-4-7", 529), ("claude-opus-4-7", 529), ("claude-sonnet-4-5", 200)]
    chat = next(s for s in rx.spans if s.name.startswith("chat "))
    a = chat.attributes
    assert chat.name == "chat claude-opus-4-7" and a["gen_ai.request.model"] == "claude-opus-4-7"
    assert a["loopwright.retries"] == 1 and [e[0] for e in chat.events] == ["api_retry"]
    assert a["loopwright.fallback.from_model"] == "claude-opus-4-7"
    assert a["loopwright.fallback.to_model"] == a["gen_ai.response.model"] == "claude-sonnet-4-5"
    assert chat.status != 2


WORKFLOW = r'''
import sys
import loopwright as lw
from loopwright.workflows import Agent, Node, chain
url = sys.argv[1]
wf = chain(Node("outline", "outline {input}"), Agent("write", lw.AgentOptions(max_turns=2, tools=[]), "write {outline}"))
from loopwright.models import resolve_model
r = wf.run("a poem", model=resolve_model("claude-sonnet-4-5", base_url=url, api_key="k"))
print(r.subtype, r.model_calls)
'''


def test_a_workflow_and_its_nodes_are_spans_with_an_agent_node_run_under_its_node(tmp_path: Path) -> None:
    script = tmp_path / "wf.py"
    script.write_text(WORKFLOW)
    with ScriptedServer([[text("an outline")], [text("a poem")]]) as srv, OtlpReceiver() as rx:
        r = subprocess.run([sys.executable, str(script), srv.url], env=cli_env(**rx.env(metrics=False)),
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout.split() == ["success", "2"]
        assert rx.wait(lambda x: len(x.named("invoke_workflow")) == 1, 5)
    wf = rx.named("invoke_workflow")[0]
    assert wf.parent_id == "" and wf.attributes["gen_ai.workflow.name"] == "chain"
    assert wf.attributes["loopwright.result.subtype"] == "success" and wf.attributes["loopwright.model_calls"] == 2
    nodes = {s.attributes["loopwright.workflow.node"]: s for s in rx.named("node ")}
    assert set(nodes) == {"outline", "write"} and all(n.parent_id == wf.span_id for n in nodes.values())
    assert nodes["outline"].attributes["gen_ai.usage.output_tokens"] > 0
    run = rx.named("invoke_agent")[0]
    assert run.parent_id == nodes["write"].span_id
    assert rx.named("chat ")[0].parent_id == run.span_id


def test_the_settings_env_turns_it_on_and_console_spans_go_to_stderr(tmp_path: Path) -> None:
    with ScriptedServer([[text("ok")], [text("ok")]]) as srv, OtlpReceiver() as rx:
        settings = json.dumps({"env": {**rx.env(metrics=False), "OTEL_SERVICE_NAME": "from-settings"}})
        r = run_p(srv, {}, tmp_path, "--settings", settings)
        assert r.returncode == 0, r.stderr
        assert has_root(rx)
        console = run_p(srv, {"OTEL_TRACES_EXPORTER": "console"}, tmp_path)
    assert rx.named("invoke_agent")[0].resource["service.name"] == "from-settings"
    assert json.loads(console.stdout)["subtype"] == "success"  # stdout is the result alone
    assert '"name": "invoke_agent loopwright"' in console.stderr


COMPACT = r'''
import sys
sys.path.insert(0, sys.argv[2])
import loopwright as lw
from tests.execute.test_context import Agent, opts
hooks = lw.Hooks()
hooks.on("PreCompact", lambda data: None)
r = lw.run("go", opts(Agent(turns=8), sys.argv[1], hooks=hooks))
print(r.subtype)
'''


def test_compaction_is_a_chat_span_of_its_own_after_its_precompact_hook(tmp_path: Path) -> None:
    script = tmp_path / "compact.py"
    script.write_text(COMPACT)
    with OtlpReceiver() as rx:
        r = subprocess.run([sys.executable, str(script), str(tmp_path), str(TESTS.parent)],
                           env=cli_env(**rx.env(metrics=False)), capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stdout.startswith("success"), r.stderr
        assert has_root(rx)
    root = next(s for s in rx.spans if s.name == "invoke_agent loopwright")
    compactions = [s for s in rx.named("chat ") if s.attributes.get("loopwright.call.purpose") == "compact_auto"]
    loop_calls = [s for s in rx.named("chat ") if "loopwright.call.purpose" not in s.attributes]
    assert compactions and len(loop_calls) == 9
    assert all(c.parent_id == root.span_id and "loopwright.call.index" not in c.attributes for c in compactions)
    assert all(c.attributes["gen_ai.usage.input_tokens"] > 0 for c in compactions)
    hooks = rx.named("hook PreCompact")
    assert len(hooks) == len(compactions) and all(h.parent_id == root.span_id for h in hooks)
    assert all(h.end_ns <= c.start_ns for h, c in zip(sorted(hooks, key=lambda s: s.start_ns),
                                                       sorted(compactions, key=lambda s: s.start_ns), strict=True))


def test_a_bash_call_in_the_os_sandbox_says_so(tmp_path: Path) -> None:
    from loopwright import sandbox

    reason = sandbox.unavailable_reason()
    if reason is not None:
        pytest.skip(f"OS sandbox unavailable: {reason}")
    turns = [[use("t1", "Bash", command="echo hi")], [text("done")]]
    with ScriptedServer(turns) as srv, OtlpReceiver() as rx:
        r = run_p(srv, rx.env(metrics=False), tmp_path, "--sandbox")  # autoAllowBashIfSandboxed: no rule needed
        assert r.returncode == 0, r.stderr
        assert has_root(rx)
    tool = next(s for s in rx.spans if s.name == "execute_tool Bash")
    assert tool.attributes["loopwright.tool.sandboxed"] is True
    assert tool.attributes["loopwright.permission.decision"] == "allow" and tool.status != 2
