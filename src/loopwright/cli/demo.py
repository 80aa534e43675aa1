"""Room: cli. Owns `loopwright demo`; may import the rooms below cli, cli.config and cli.render.

`loopwright demo`: the seed's Example 4.3 ("fix the failing test" in three tool-use
turns), run for real on a copy of a small bundled project, offline.

The model is scripted (the answers of Example 4.3, fixed in advance); everything else
is real: the built-in Bash, Read and Edit tools, the permission gate, the loop, the
token and cost accounting, and the pairing invariant Inv, checked independently on
every request the model receives.

    loopwright demo                  # 3 tool-use turns, 4 model calls, the test passes
    loopwright demo --max-turns 2    # the turn limit stops the run before the Edit

Exit code: 0 when the run did exactly what the seed says it must, else 1:
- no limit (or --max-turns >= 3): subtype success, turns = 3, calls = 4, Inv held on
  every call, and the project's tests pass when run again after the loop;
- --max-turns T < 3: subtype error_max_turns, turns = T, calls = T + 1 (Thm 4.1's bound),
  Inv held on every call, and grades.py is byte-for-byte unchanged (the Edit never ran).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..assemble import query
from ..blocks import ToolUseBlock
from ..invariant import check
from ..messages import AssistantMessage, ResultMessage
from ..models.base import ModelEvent, ModelRequest, ModelResponse
from ..models.catalog import call_cost
from ..models.scripted import ScriptedModel
from ..options import AgentOptions
from ..prompts import default_system_prompt
from .args import Parser
from .render import TraceRenderer, is_tty, short

PROJECT = Path(__file__).resolve().parent.parent / "demo_project"
PRICED_AS = "claude-sonnet-5-5"
IMPL, TEST, RUNNER = "grades.py", "test_grades.py", "run_tests.py"
BUGGY, FIXED = "    if score > 90:", "    if score >= 90:"
PROMPT = "The tests are failing. Fix the failing test."
FULL_TURNS = 3  # tool-use turns of Example 4.3


def script(project: Path) -> list[Any]:
    """The assistant messages 2, 4, 6 and 8 of seed Example 4.3, with Claude Code's tool inputs."""
    run_tests = f"{shlex.quote(sys.executable)} {RUNNER}"

    def use(uid: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        return {"type": "tool_use", "id": uid, "name": name, "input": tool_input}

    return [
        [{"type": "text", "text": "I'll run the tests first."},
         use("toolu_01", "Bash", {"command": run_tests, "description": "Run the test suite"})],
        [use("toolu_02", "Read", {"file_path": str(project / IMPL)}),
         use("toolu_03", "Read", {"file_path": str(project / TEST)})],
        [use("toolu_04", "Edit", {"file_path": str(project / IMPL), "old_string": BUGGY, "new_string": FIXED}),
         use("toolu_05", "Bash", {"command": run_tests, "description": "Run the tests again"})],
        [{"type": "text", "text": "The cause was the boundary check: a score of exactly 90 must be an A, "
                                  "so `score > 90` is now `score >= 90`. All tests pass now."}],
    ]


@dataclass
class CheckedModel:
    """Wraps a model: checks Inv (seed Def 3.3) on every request itself, independently of
    the loop's own check, and prices the scripted token counts like a real model."""

    inner: ScriptedModel
    priced_as: str = PRICED_AS
    name: str = "scripted"
    has_own_cost: bool = True
    checks: int = 0
    n_k: list[int] = field(default_factory=list)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        check(request.messages)  # raises InvariantViolation: the run would end with an error
        self.checks += 1
        async for ev in self.inner.stream(request):
            if isinstance(ev, ModelResponse):
                ev.cost_usd = call_cost(ev.usage, self.priced_as)
                self.n_k.append(ev.usage.total_input_tokens)
            yield ev


def copy_project(dest_root: Path) -> Path:
    dest = dest_root / "demo_project"
    shutil.copytree(PROJECT, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"))
    return dest


def run_tests(project: Path) -> tuple[int, str]:
    """The project's own verdict, outside the loop: run its test runner again."""
    p = subprocess.run([sys.executable, RUNNER], cwd=project, capture_output=True, text=True, timeout=60)
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    return p.returncode, lines[-1].strip("= ") if lines else "(no output)"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def run_demo(project: Path, max_turns: int | None, out: Any, verbose: bool
                   ) -> tuple[ResultMessage, CheckedModel, list[str]]:
    from ..tools.builtin import default_tools

    model = CheckedModel(ScriptedModel(script(project), name="scripted"))
    tools = default_tools()
    options = AgentOptions(
        model=model,  # a structural Model
        tools=tools,
        max_turns=max_turns,
        cwd=str(project),
        system_prompt=default_system_prompt(project, tools),
        # The gate is on, as in real use: edits are accepted, Bash is allowed by rule.
        permission_mode="acceptEdits",
        allowed_tools=["Bash"],
    )
    renderer = TraceRenderer(out, verbose=verbose)
    result: ResultMessage | None = None
    tools_per_call: list[str] = []
    try:
        async for msg in query(PROMPT, options):
            renderer.show(msg)
            if isinstance(msg, AssistantMessage):
                tools_per_call.append(", ".join(b.name for b in msg.content if isinstance(b, ToolUseBlock)) or "—")
            if isinstance(msg, ResultMessage):
                result = msg
    finally:
        renderer.close()
    assert result is not None
    return result, model, tools_per_call


def summary_table(result: ResultMessage, model: CheckedModel, tools_per_call: list[str]) -> list[str]:
    rows = ["", f"{'call':>4}  {'n_k (input)':>11}  {'growth':>6}  {'output':>6}  {'cost':>8}  Inv  tools",
            f"{'-' * 4}  {'-' * 11}  {'-' * 6}  {'-' * 6}  {'-' * 8}  ---  {'-' * 16}"]
    prev: int | None = None
    for k, c in enumerate(result.call_usage, 1):
        growth = "" if prev is None else f"+{c.input_tokens - prev}"
        prev = c.input_tokens
        tools = tools_per_call[k - 1] if k - 1 < len(tools_per_call) else ""
        inv = "✓" if k <= model.checks else "?"
        cost = f"${c.cost_usd:.4f}"
        rows.append(f"{k:>4}  {c.input_tokens:>11}  {growth:>6}  {c.output_tokens:>6}  {cost:>8}  {inv:^3}  {tools}")
    rows.append("n_k = s + sum of (a_i + r_i) for i < k (seed Def 5.1): each call re-reads everything before it; "
                "growth = a_(k-1) + r_(k-1)")
    rows.append(f"total: {result.num_turns} tool-use turns, {result.model_calls} model calls, "
                f"${result.total_cost_usd:.4f} (scripted tokens priced as {model.priced_as}), "
                f"{result.duration_ms} ms")
    rows.append(f"Inv (seed Def 3.3) checked on every request: {model.checks} of {result.model_calls} calls ✓"
                if model.checks == result.model_calls else
                f"Inv checked on {model.checks} of {result.model_calls} calls ✗")
    return rows


def history_table(messages: list[dict[str, Any]]) -> list[str]:
    """The final message list, row by row, in the form of seed Example 4.3's table."""

    def block(b: dict[str, Any]) -> str:
        kind = b.get("type")
        if kind == "text":
            return f'text "{short(str(b.get("text", "")), 48)}"'
        if kind == "tool_use":
            return f"tool_use({b.get('id')}, {b.get('name')})"
        if kind == "tool_result":
            return f"tool_result({b.get('tool_use_id')}{', error' if b.get('is_error') else ''})"
        return str(kind)

    rows = ["", f"{'#':>2}  {'role':<9}  content blocks (seed Ex 4.3's table)"]
    for i, m in enumerate(messages, 1):
        content = m.get("content")
        blocks = [block(b) for b in content if isinstance(b, dict)] if isinstance(content, list) else [str(content)]
        rows.append(f"{i:>2}  {m.get('role', '?'):<9}  {', '.join(blocks)}")
    return rows


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="loopwright demo",
        description="Run seed Example 4.3 (fix a failing test in 3 tool-use turns) offline, with a scripted "
                    "model and the real built-in tools, on a copy of a bundled project.",
        epilog="Exit code 0 when the run behaves as the seed says: with no limit the tests pass after 3 turns "
               "and 4 calls; with --max-turns T < 3 the run stops with error_max_turns after T turns and T+1 "
               "calls and the file is unchanged. Otherwise 1.",
    )
    p.add_argument("--max-turns", type=int, default=None, help="limit T on tool-use turns (try 2)")
    p.add_argument("--keep", action="store_true", help="keep the project copy instead of deleting it")
    p.add_argument("--verbose", action="store_true", help="show full tool outputs")
    return p


def demo_main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    if args.max_turns is not None and args.max_turns < 0:
        print("loopwright demo: --max-turns must be 0 or more", file=sys.stderr)
        return 2
    out = sys.stdout
    bold = (lambda s: f"\x1b[1m{s}\x1b[0m") if is_tty(out) else (lambda s: s)
    root = Path(tempfile.mkdtemp(prefix="loopwright-demo-"))
    try:
        project = copy_project(root)
        before = digest(project / IMPL)
        code0, verdict0 = run_tests(project)
        T = args.max_turns
        print(bold("loopwright demo — seed Example 4.3: fix a failing test"), file=out)
        print(f"project: {project}  (tests before: {verdict0})", file=out)
        print(f"model: scripted (Example 4.3's answers); tools: real Bash, Read, Edit; "
              f"max_turns: {'none' if T is None else T}", file=out)
        print(f"user: {PROMPT}", file=out)
        out.flush()
        result, model, tools_per_call = asyncio.run(run_demo(project, T, out, args.verbose))
        for row in [*history_table(result.messages), *summary_table(result, model, tools_per_call)]:
            print(row, file=out)
        code, verdict = run_tests(project)
        unchanged = digest(project / IMPL) == before
        inv_ok = model.checks == result.model_calls
        if T is None or T >= FULL_TURNS:
            ok = (result.subtype == "success" and result.num_turns == FULL_TURNS
                  and result.model_calls == FULL_TURNS + 1 and len(result.messages) == 2 * FULL_TURNS + 2
                  and inv_ok and code0 != 0 and code == 0)
            print(f"tests after the run (run again, outside the loop): {verdict} "
                  f"{'✓' if code == 0 else '✗'}", file=out)
            line = ("fixed: 3 tool-use turns, 4 model calls, and the tests really pass"
                    if ok else "not as expected: see the trace above")
        else:
            ok = (result.subtype == "error_max_turns" and result.num_turns == T
                  and result.model_calls == T + 1 and len(result.messages) == 2 * T + 1 and inv_ok and unchanged)
            print(f"stopped by the turn limit (seed Ex 4.3 / Thm 4.1): subtype={result.subtype}, "
                  f"turns={result.num_turns} = T, calls={result.model_calls} = T + 1", file=out)
            print(f"call {result.model_calls}'s answer (its tool calls) was not appended: the history stays at "
                  f"{len(result.messages)} messages (seed Def 3.1, step 3)", file=out)
            where = (f", in call {FULL_TURNS}'s answer, never ran" if result.model_calls == FULL_TURNS
                     else f" would come in call {FULL_TURNS}, which never happened")
            print(f"{IMPL} unchanged: {'yes ✓' if unchanged else 'NO ✗'} (the Edit{where}); "
                  f"tests: {verdict}", file=out)
            line = (f"as the seed says: with T = {T} the loop stops before the fix, the file untouched"
                    if ok else "not as expected: see the trace above")
        print(bold(("✓ " if ok else "✗ ") + line), file=out)
        if args.keep:
            print(f"kept: {project}", file=out)
        return 0 if ok else 1
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
