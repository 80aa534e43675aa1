"""The official Agent SDKs' OWN example programs, unmodified, run against loopwright on scripted
turns: the Claude Agent SDK's `examples/` with loopwright as its CLI, and the OpenAI Agents SDK's
`examples/basic` and `examples/agent_patterns` and pydantic-ai's bank_support.py with
loopwright.testing's loopback server as their OpenAI model (no API key, no network).

The examples are nobody's code here: they are read from the SDKs' own source distributions on
PyPI, pinned to the installed versions, which `.ci/run` downloads once into the test cache
(`tests/sdkproto/sdists.sh`); a test skips, naming the command, where its sdist is not there. Each
example runs in its own process, exactly as its README runs it (`python EXAMPLE.py [NAME]`); the
only change is where it points: the Claude Agent SDK finds its CLI as it finds its bundled one
(RUNNER below: the bundled binary's lookup answers loopwright's path), and the OpenAI examples get
`OPENAI_BASE_URL`. The scripted model (`Director`) plays what a model would do for each example's
prompts (which tools it calls, with what), and each test asserts what the example is about: on its
output, on the files it leaves, and on what reached the model."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import LOOPWRIGHT_BIN, text, use

# (each example a fresh interpreter importing its SDK: at load ~20 one took 68 s, near the 100 s it
# was given and the suite's 120 s per test; hang guards only, a passing run waits no longer)
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

# read at import: the tests' own HOME is a temporary one (conftest), the sdists are in the user's cache
CACHE = Path(os.environ.get("LOOPWRIGHT_TEST_CACHE") or
             Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "loopwright-tests")
SDISTS = CACHE / "sdists"
FETCH = "bash tests/sdkproto/sdists.sh (.ci/run does)"

# The Claude Agent SDK looks for its CLI in the wheel (the bundled Claude Code) first: that lookup
# answers loopwright's path, and the example then runs as its README runs it.
RUNNER = """import os, runpy, sys
from claude_agent_sdk._internal.transport import subprocess_cli
subprocess_cli.SubprocessCLITransport._find_bundled_cli = lambda self: os.environ["LOOPWRIGHT_CLI"]
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(sys.argv[0]))
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def sdist_tree(dist: str, tmp_root: Path, only: str | None = None) -> Path:
    """The installed `dist`'s own sdist, unpacked under tmp_root (skips when it is not cached);
    `only`: just that folder of it."""
    try:
        version = importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{dist} is not installed")
    name = f"{dist.replace('-', '_')}-{version}"
    archive = SDISTS / f"{name}.tar.gz"
    if not archive.exists():
        pytest.skip(f"{dist} {version}'s sdist (its examples) is not in {SDISTS}: run {FETCH}")
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if only is None or m.name.startswith(f"{name}/{only}/")]
        tar.extractall(tmp_root, members=members, filter="data")
    return tmp_root / name


# --- the model's side ----------------------------------------------------------------------

Block = dict[str, Any]


def prompt_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") for b in content if isinstance(b, dict))


def tool_results(content: Any) -> list[str]:
    out = []
    for b in content if isinstance(content, list) else []:
        if isinstance(b, dict) and b.get("type") == "tool_result":
            c = b.get("content")
            out.append(c if isinstance(c, str) else " ".join(x.get("text", "") for x in c or []))
    return out


class Director:
    """A scripted model for programs whose prompts are fixed: for the prompt that contains a key
    of `plan` (in its order), the turns of that key are played one after another (each a list of
    blocks, or a {content, delay} turn); once they are played, or for any other prompt, it answers
    `Answer: <what the last tool said>` (or `Answer to: <prompt>`), so the program prints it.
    `{root}` in a turn is the example's directory (where it runs)."""

    def __init__(self, plan: dict[str, list[Any]] | None = None, root: Path | None = None) -> None:
        self.plan = json.loads(json.dumps(plan or {}).replace("{root}", str(root)))

    def __call__(self, messages: list[dict[str, Any]]) -> Any:
        # the prompt: the last user message that is no tool results (a subagent's first message)
        at = max(i for i, m in enumerate(messages) if m["role"] == "user" and not tool_results(m["content"]))
        prompt = prompt_text(messages[at]["content"])
        step = sum(1 for m in messages[at:] if m["role"] == "assistant")
        for key, turns in self.plan.items():
            if key in prompt and step < len(turns):
                return turns[step]
        results = tool_results(messages[-1]["content"])
        if results:
            return [text("Answer: " + " | ".join(r.strip() for r in results)[:300])]
        return [text("Answer to: " + prompt.strip().splitlines()[0][:80] if prompt.strip() else "Answer")]


def every_call(body: dict[str, Any]) -> bool:
    """Every request plays the script (a run without tools too), but a max_tokens=1 probe."""
    return not (isinstance(body.get("max_tokens"), int) and body["max_tokens"] <= 1)


def run_example(path: Path, *args: str, env: dict[str, str], cwd: Path,
                timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", RUNNER, str(path), *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


# --- the Claude Agent SDK's examples, loopwright as the CLI -----------------------------------

@pytest.fixture
def claude_sdk(tmp_path: Path) -> Path:
    """(Unpacked for each test, a few ms: a module fixture would hold all of them on one worker.)"""
    pytest.importorskip("claude_agent_sdk")
    return sdist_tree("claude-agent-sdk", tmp_path / "sdist")


class ClaudeRun:
    """One example's run: its output, the loopback server that played the model, its directory."""

    def __init__(self, proc: subprocess.CompletedProcess[str], srv: ScriptedServer, root: Path) -> None:
        self.proc, self.srv, self.root = proc, srv, root
        self.out = proc.stdout

    def ok(self) -> ClaudeRun:
        assert self.proc.returncode == 0, self.proc.stdout[-2000:] + self.proc.stderr[-3000:]
        assert "Traceback" not in self.proc.stderr, self.proc.stderr[-3000:]
        return self

    def results_sent(self) -> list[str]:
        """Every tool result the model was sent, in order (each once)."""
        seen: list[str] = []
        for r in self.srv.loop_requests:
            for t in tool_results(r.body["messages"][-1]["content"]):
                seen.append(t)
        return seen


@pytest.fixture
def claude_example(claude_sdk: Path, tmp_path: Path) -> ClaudeExamples:
    """Run examples/NAME with ARGS on `plan`, in a copy of the SDK's tree (the examples read
    their own directory's parent as the SDK's checkout), the process's cwd at the copy's root."""
    root = tmp_path / "sdk"
    shutil.copytree(claude_sdk / "examples", root / "examples")

    return ClaudeExamples(root)


class ClaudeExamples:
    """`examples(NAME, *ARGS, plan=...)`: one run of examples/NAME in `root`, the model on `plan`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __call__(self, name: str, *args: str, plan: dict[str, list[Any]] | None = None,
                 timeout: float = 240) -> ClaudeRun:
        with ScriptedServer(Director(plan, self.root), is_loop_call=every_call) as srv:
            env = {**os.environ, "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "test",
                   "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                   "LOOPWRIGHT_CLI": str(LOOPWRIGHT_BIN if LOOPWRIGHT_BIN.exists()
                                         else Path(sys.executable).parent / "loopwright")}
            proc = run_example(self.root / "examples" / name, *args, env=env, cwd=self.root, timeout=timeout)
        return ClaudeRun(proc, srv, self.root)


def test_quick_start(claude_example: ClaudeExamples) -> None:
    r = claude_example("quick_start.py", plan={
        "hello.txt": [[use("w1", "Write", file_path="{root}/hello.txt", content="Hello, World!")]],
    }).ok()
    assert "Claude: Answer to: What is 2 + 2?" in r.out
    assert "Claude: Answer to: Explain what Python is in one sentence." in r.out
    assert (r.root / "hello.txt").read_text() == "Hello, World!"  # allowed_tools=["Read", "Write"]
    assert "Claude: Answer: File created successfully" in r.out and "Cost: $" in r.out
    assert "You are a helpful assistant that explains things simply." in json.dumps(r.srv.loop_requests[1].body["system"])


def test_hooks(claude_example: ClaudeExamples) -> None:
    r = claude_example("hooks.py", "all", plan={
        "./foo.sh --help": [[use("b1", "Bash", command="./foo.sh --help")]],
        "Hello from hooks example!": [[use("b2", "Bash", command="echo 'Hello from hooks example!'")]],
        "ls /nonexistent_directory": [[use("b3", "Bash", command="ls /nonexistent_directory")]],
        "important_config.txt": [[use("w1", "Write", file_path="{root}/important_config.txt", content="test data")]],
        "regular_file.txt": [[use("w2", "Write", file_path="{root}/regular_file.txt", content="test data")]],
        "CRITICAL ERROR": [[use("b4", "Bash", command="echo 'CRITICAL ERROR: system failure'")]],
    }).ok()
    sent = r.results_sent()
    # PreToolUse: ./foo.sh is refused with the hook's reason, echo runs
    assert any("Command contains invalid pattern: foo.sh" in t for t in sent), sent
    assert any(t.strip() == "Hello from hooks example!" for t in sent), sent
    # UserPromptSubmit: the hook's additionalContext went with the prompt
    assert "Claude: Answer to: What's my favorite color?" in r.out
    assert any("My favorite color is hot pink" in json.dumps(q.body["messages"]) for q in r.srv.loop_requests)
    # the failing ls comes back as an error (a failed call fires PostToolUseFailure, not the example's
    # PostToolUse hook: Claude Code sends the model no review of it either)
    assert any("No such file or directory" in t and "Exit code 2" in t for t in sent), sent
    # permissionDecision deny / allow on Write
    assert not (r.root / "important_config.txt").exists()
    assert any("Security policy blocks writes to important files" in t for t in sent), sent
    assert (r.root / "regular_file.txt").read_text() == "test data"
    # continue_=False after the CRITICAL ERROR output: no model call after that tool result
    last = r.srv.loop_requests[-1].body["messages"]
    assert "CRITICAL ERROR" in prompt_text(last[-1]["content"]) and not tool_results(last[-1]["content"])


@pytest.mark.timeout(300)  # six clients, one after another: each its own loopwright process
def test_mcp_calculator(claude_example: ClaudeExamples) -> None:
    """The in-process SDK MCP server's tools, pre-approved by allowed_tools, one client per prompt."""
    r = claude_example("mcp_calculator.py", plan={
        "15 + 27": [[use("c1", "mcp__calc__add", a=15, b=27)]],
        "100 divided by 7": [[use("c2", "mcp__calc__divide", a=100, b=7)]],
        "square root of 144": [[use("c3", "mcp__calc__sqrt", n=144)]],
        "2 raised to the power of 8": [[use("c4", "mcp__calc__power", base=2, exponent=8)]],
        "(12 + 8) * 3 - 10": [[use("c5", "mcp__calc__add", a=12, b=8)], [use("c6", "mcp__calc__multiply", a=20, b=3)],
                              [use("c7", "mcp__calc__subtract", a=60, b=10)]],
    }, timeout=240).ok()
    for shown in ("Using tool: mcp__calc__add", "Claude: Answer: 15 + 27 = 42", "Claude: Answer: 100 ÷ 7 = 14.28",
                  "Claude: Answer: √144 = 12.0", "Claude: Answer: 2^8 = 256", "Claude: Answer: 60 - 10 = 50"):
        assert shown in r.out, r.out
    tools = r.srv.loop_requests[0].body["tools"]
    assert {"mcp__calc__add", "mcp__calc__sqrt", "mcp__calc__power"} <= {t["name"] for t in tools}


def test_tool_permission_callback(claude_example: ClaudeExamples) -> None:
    """can_use_tool asked for each call: a write outside /tmp/ is redirected by updated_input to
    ./safe_output/ (and runs there, the callback not asked about its own redirect: the example's
    callback would ask a person on stdin), a dangerous command is denied with the callback's message."""
    r = claude_example("tool_permission_callback.py", plan={
        "hello world script": [[use("p1", "Bash", command="ls")],
                               [use("p2", "Write", file_path="hello.py", content="print('Hello, World!')\n")],
                               [use("p3", "Bash", command="sudo python3 hello.py")],
                               [use("p4", "Bash", command="python3 safe_output/hello.py")]],
    }).ok()
    assert (r.root / "safe_output" / "hello.py").read_text() == "print('Hello, World!')\n"
    assert not (r.root / "hello.py").exists()
    assert "Redirecting write from" in r.out and "./safe_output/hello.py" in r.out
    sent = r.results_sent()
    assert any("Dangerous command pattern detected: sudo" in t for t in sent), sent
    assert any(t.strip() == "Hello, World!" for t in sent), sent
    assert "Tool: Write" in r.out and "Tool: Bash" in r.out and "✅ Task completed!" in r.out


def test_agents(claude_example: ClaudeExamples) -> None:
    """AgentDefinitions passed in the options: the model delegates, the subagent runs with its own
    prompt and tools, its answer comes back as the Agent call's result."""
    r = claude_example("agents.py", plan={
        "code-reviewer agent": [[use("a1", "Agent", subagent_type="code-reviewer", description="review types.py",
                                     prompt="Review the code in src/claude_agent_sdk/types.py")]],
        "Review the code in": [[text("No bugs found in types.py.")]],
    }).ok()
    assert "Claude: Answer: No bugs found in types.py." in r.out
    sub = next(q for q in r.srv.loop_requests if "Review the code in" in prompt_text(q.body["messages"][0]["content"]))
    assert "You are a code reviewer." in json.dumps(sub.body["system"])
    assert {t["name"] for t in sub.body["tools"]} == {"Read", "Grep"}
    assert "Claude: Answer to: Use the doc-writer agent" in r.out and "Claude: Answer to: Use the analyzer agent" in r.out


def test_max_budget_usd(claude_example: ClaudeExamples) -> None:
    r = claude_example("max_budget_usd.py", plan={
        "README.md": [[use("r1", "Read", file_path="{root}/README.md")]],
    })
    # the SDK (0.2.189) raises on the error result and the example ends with its traceback, exit 1,
    # as it does with Claude Code: after printing what it set out to show
    assert r.proc.returncode == 1 and "ResultError" in r.proc.stderr, r.proc.stderr[-2000:]
    assert r.out.count("Status: success") == 2
    assert "Status: error_max_budget_usd" in r.out and "Budget limit exceeded!" in r.out
    assert len(r.srv.loop_requests) == 3  # the tight budget's run stopped after its first call


def test_setting_sources_and_filesystem_agents(claude_example: ClaudeExamples) -> None:
    """The examples read the SDK checkout's own .claude/ (not in the sdist): a project command
    and a project agent, as in the repository, are listed or not per setting_sources."""
    root = claude_example.root
    (root / ".claude" / "commands").mkdir(parents=True)
    (root / ".claude" / "commands" / "commit.md").write_text("Commit the staged changes.\n")
    (root / ".claude" / "agents").mkdir()
    (root / ".claude" / "agents" / "test-agent.md").write_text(
        "---\nname: test-agent\ndescription: A test agent\ntools: Read\n---\nYou are a test agent.\n")
    r = claude_example("setting_sources.py", "all").ok()
    assert r.out.count("✓ /commit is available") == 2 and r.out.count("✓ /commit is NOT available") == 2, r.out
    assert "unexpected" not in r.out
    r = claude_example("filesystem_agents.py").ok()
    assert "SUCCESS: Received full response" in r.out and "test-agent was NOT loaded" not in r.out, r.out


STREAMING: dict[str, tuple[dict[str, list[Any]], list[str]]] = {
    "multi_turn_conversation": ({}, ["Claude: Answer to: What's the capital of France?",
                                     "Claude: Answer to: What's the population of that city?"]),
    # (the server answers the next request once the slow one's delay is over: keep it short)
    "with_interrupt": ({"Count from 1 to 100": [{"content": [text("1, 2, 3")], "delay": 6}]},
                       ["sending interrupt", "Claude: Answer to: Never mind, just tell me a quick joke"]),
    "bash_command": ({"bash echo": [[use("e1", "Bash", command="echo 'Hello from bash!'")]]},
                     ["Hello from bash!", "Claude: Answer: Hello from bash!"]),
    "control_protocol": ({}, ["Server info retrieved successfully!"]),
    "error_handling": ({"sleep command": [[use("s1", "Bash", command="sleep 5")]]},
                       ["Response timeout after 3 seconds"]),
}


@pytest.mark.parametrize("name", list(STREAMING))
def test_streaming_mode(claude_example: ClaudeExamples, name: str) -> None:
    """ClaudeSDKClient's examples: a multi-turn conversation, interrupt during a slow answer, a Bash
    tool call, the control protocol (server info, interrupt), a receive timeout then disconnect."""
    plan, shown = STREAMING[name]
    r = claude_example("streaming_mode.py", name, plan=plan).ok()
    for line in shown:
        assert line in r.out, r.out
    if name == "multi_turn_conversation":  # one conversation: the second prompt comes with the first
        assert "capital of France" in json.dumps(r.srv.loop_requests[1].body["messages"])
    if name == "with_interrupt":
        assert "1, 2, 3" not in r.out  # the interrupted answer never came


def test_system_prompt(claude_example: ClaudeExamples) -> None:
    r = claude_example("system_prompt.py").ok()
    assert r.out.count("Claude: Answer to: What is 2 + 2?") == 4
    systems = [json.dumps(q.body.get("system")) for q in r.srv.loop_requests]
    assert "pirate" in systems[1] and "pirate" not in systems[0] and "Always end your response" in systems[3], systems


def test_tools_option(claude_example: ClaudeExamples) -> None:
    r = claude_example("tools_option.py").ok()
    tool_sets = [{t["name"] for t in q.body.get("tools", [])} for q in r.srv.loop_requests]
    assert tool_sets[0] == {"Read", "Glob", "Grep"} and tool_sets[1] == set() and {"Bash", "Write"} <= tool_sets[2]
    assert "Tools from system message: ['Read', 'Glob', 'Grep']" in r.out and "Tools from system message: []" in r.out


def test_include_partial_messages_plugins_and_stderr(claude_example: ClaudeExamples) -> None:
    r = claude_example("include_partial_messages.py").ok()
    assert "'type': 'content_block_delta'" in r.out and "ResultMessage(subtype='success'" in r.out
    r = claude_example("plugin_example.py").ok()
    assert "demo-plugin (path:" in r.out and "Plugin successfully configured!" in r.out
    r = claude_example("stderr_callback_example.py").ok()
    assert "Captured 0 stderr lines" in r.out  # (Claude Code too writes nothing on stderr here)


# --- the OpenAI Agents SDK's examples, loopwright.testing's server as their OpenAI model ----------

# (both of two agents given the same input get this answer: valid JSON for the one with an output_type)
GUARD = '{"reasoning": "a question about geography", "is_math_homework": false}'
MATH = '{"reasoning": "an equation to solve", "is_math_homework": true}'
CHECKED = '{"good_quality": true, "is_scifi": true}'
OPENAI: dict[str, tuple[dict[str, list[Any]], list[str]]] = {
    "basic.hello_world": ({}, ["Answer to: Tell me about recursion in programming."]),
    "basic.tools": ({"weather in Tokyo": [[use("c1", "get_weather", city="Tokyo")]]},
                    ["[debug] get_weather called", "Sunny with wind."]),
    "basic.stream_text": ({"5 jokes": [[text("Why did the loop stop? It hit its limit.")]]},
                          ["Why did the loop stop? It hit its limit."]),
    "agent_patterns.routing": ({"good evening in French": [[use("h1", "transfer_to_french_agent")]]},
                               ["Answer: "]),
    "agent_patterns.agents_as_tools": (
        {"to French and Spanish": [[use("t1", "translate_to_french", input="Hello, world!"),
                                    use("t2", "translate_to_spanish", input="Hello, world!")]],
         "Hello, world!": [[text("Bonjour / Hola")]]},
        ["Final response:"]),
    "agent_patterns.deterministic": ({"sci-fi story": [[text("Outline: a robot learns to dream on Mars.")]],
                                      "a robot learns to dream": [[text(CHECKED)]]},
                                     ["Outline generated", "Outline is good quality and a scifi story", "Story: "]),
    # the guardrail agent and the agent both answer; the second auto-input is math homework: tripwire
    "agent_patterns.input_guardrails": ({"capital of California": [[text(GUARD)]], "solve for x": [[text(MATH)]]},
                                        [GUARD, "Sorry, I can't help you with your math homework."]),
}


@pytest.fixture(scope="session")
def openai_agents_sdk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Its examples/ (all the examples run; the rest of the 7 MB sdist is the library, installed),
    unpacked once per worker: unpacking the whole sdist for each example took seconds under load.
    (Session scope, not module: the examples still spread over the workers.)"""
    pytest.importorskip("agents")
    return sdist_tree("openai-agents", tmp_path_factory.mktemp("openai-agents-sdist"), only="examples")


@pytest.mark.parametrize("module", list(OPENAI))
def test_openai_agents_example(openai_agents_sdk: Path, module: str) -> None:
    """Each example as its README runs it (`python -m examples.MODULE`, with the examples' own
    EXAMPLES_INTERACTIVE_MODE=auto answering their input() prompts), its AsyncOpenAI client on the
    loopback server (OPENAI_BASE_URL; tracing, which would send spans to OpenAI, off)."""
    plan, shown = OPENAI[module]
    with ScriptedServer(Director(plan), is_loop_call=every_call) as srv:
        env = {**os.environ, "OPENAI_BASE_URL": srv.openai_url, "OPENAI_API_KEY": "test",
               "OPENAI_AGENTS_DISABLE_TRACING": "1", "EXAMPLES_INTERACTIVE_MODE": "auto"}
        proc = subprocess.run([sys.executable, "-m", f"examples.{module}"], env=env, cwd=openai_agents_sdk,
                              capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    for line in shown:
        assert line in proc.stdout, proc.stdout
    assert srv.loop_requests and all(r.status == 200 for r in srv.requests)
    if module == "basic.tools":  # the tool's output went back to the model
        assert "Sunny with wind." in json.dumps(srv.loop_requests[-1].body)
    if module == "agent_patterns.routing":  # after the handoff, the French agent's instructions
        assert "You only speak French" in json.dumps(srv.loop_requests[1].body)


# --- pydantic-ai's examples (the pydantic-ai-examples wheel), the same server as their OpenAI model ---

PYDANTIC_AI_EXAMPLES = "pydantic_ai_examples-2.62.0-py3-none-any.whl"


def test_pydantic_ai_bank_support(tmp_path: Path) -> None:
    """bank_support.py: dynamic instructions from the deps, a tool reading the deps' database, a
    structured output (pydantic-ai's output tool), two run_sync calls."""
    pytest.importorskip("pydantic_ai")
    import zipfile

    wheel = SDISTS / PYDANTIC_AI_EXAMPLES
    if not wheel.exists():
        pytest.skip(f"pydantic-ai's examples ({PYDANTIC_AI_EXAMPLES}) are not in {SDISTS}: run {FETCH}")
    with zipfile.ZipFile(wheel) as z:
        example = tmp_path / "bank_support.py"
        example.write_bytes(z.read("pydantic_ai_examples/bank_support.py"))
    plan = {
        "What is my balance?": [[use("b1", "customer_balance")],
                                [use("f1", "final_result", support_advice="Hello John, your balance is $123.45.",
                                     block_card=False, risk=1)]],
        "lost my card": [[use("f2", "final_result", support_advice="I have blocked your card, John.",
                              block_card=True, risk=8)]],
    }
    with ScriptedServer(Director(plan), is_loop_call=every_call) as srv:
        env = {**os.environ, "OPENAI_BASE_URL": srv.openai_url, "OPENAI_API_KEY": "test"}
        proc = subprocess.run([sys.executable, str(example)], env=env, cwd=tmp_path, capture_output=True,
                              text=True, timeout=240, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "support_advice='Hello John, your balance is $123.45.' block_card=False risk=1" in proc.stdout
    assert "support_advice='I have blocked your card, John.' block_card=True risk=8" in proc.stdout
    first, second = srv.loop_requests[:2]
    assert "The customer's name is 'John'" in json.dumps(first.body)  # the deps-built instructions
    assert "$123.45" in json.dumps(second.body["input"])  # the tool read the example's sqlite database
