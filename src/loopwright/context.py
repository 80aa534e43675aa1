"""Room: execute / invariant / context. Owns compaction (when it is due: autocompact.py); may
import data types, bases, models, invariant and autocompact, never options or above.

Context compaction: the answer to seed Prop 5.2 (3).

With per-turn growth c, the loop makes at most (W - s)/c + 1 calls before the history
fills the context window W. Compaction replaces the older part of the history with a
summary written by one model call, so the run can go on:

    [m1 .. m_{i-1}, m_i .. m_N]  ->  [user(summary of m1..m_{i-1}), m_i .. m_N]

The cut is always just before an assistant message m_i (a *turn* is an assistant message
and the user messages after it), so every tool_result in the kept tail answers a tool_use
in the kept tail and Inv (P1-P3) holds on the result; the kept turns are verbatim (thinking
blocks and signatures included). The summarizing call gets the dropped part rendered as a
text transcript and no tools: tool_use blocks without tool definitions are refused by
some providers, and a transcript fits every provider.

Two ways in:
- `compact(history, model, keep_last_turns=N, instructions=...)`: the pure operation;
  it and the loop's `Run.compact` both run `summarize` (the summarizing calls and their cost,
  through the catalog's `call_cost`), each with its own way to call the model and count the cost;
- automatic, in the loop (`Run.auto_compact()` in loop.py, before each model call;
  `AutoCompactor`, autocompact.py, says when it is due): when the forecast
  n_{k+1} = n_k + a_k + r_k (seed Def 5.1, from the last call's measured n_k and output)
  exceeds `compact_threshold * W`. `W` is `AgentOptions.context_window`, else a per-model
  default (`default_context_window`), else auto-compaction is off.

Accounting: the summarizing call is not a step of seed Def 3.1, so it is not counted in
`model_calls` or `call_usage` (the n_k series; Thm 4.1's T + 1 bound stays a bound on the
loop's calls). Its tokens and cost ARE added to the run's `usage` and `total_cost_usd`, and
the budget rule applies to it like to any response: its cost is charged, then compared with
B, and a run whose total reached B stops with error_max_budget_usd before the next call.

Failure: if the summarizing call fails (raises, refuses, or returns no text) the history
is left untouched, a SystemMessage("compact_error") is yielded and the run goes on with the
full history; auto-compaction is not tried again in that run (a broken summarizer must not
be paid for on every turn). A PreCompact hook that blocks also leaves the history as is.

Rooms: pure operations on histories (`AutoCompactor`, which only says when compaction is due,
is in autocompact.py); imports data types, models.base, invariant and usage, never the loop, options or
sessions. Compacting a running loop is `Run.compact` (loop.py: its hook, its stream and its
budget around `summarize`); between runs, `client.compact_conversation` (the hook, `compact`,
the transcript's compact_boundary).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

# When compaction is due, and the window: apart (autocompact.py), so that a run loads this module
# only when it compacts (start-up, issue 41); named here too, where they were.
from .autocompact import DEFAULT_KEEP_TURNS as DEFAULT_KEEP_TURNS
from .autocompact import AutoCompactor as AutoCompactor
from .autocompact import default_context_window as default_context_window
from .autocompact import turn_starts as turn_starts
from .blocks import WireMessage, text_of
from .invariant import check as check_inv
from .models.base import Model, ModelError, ModelRequest, ModelResponse, complete
from .models.catalog import call_cost
from .tokens import estimate_tokens

if TYPE_CHECKING:
    from .usage import Price

MAX_RESULT_CHARS = 8_000  # a tool result longer than this is cut in the transcript (head + tail)

SUMMARY_SYSTEM = (
    "You write the working memory of an AI agent. The conversation below is being compacted to fit "
    "the context window: your summary replaces it, and the agent will continue the work from your "
    "summary alone. Be precise and complete; prefer facts over narration."
)
SUMMARY_PROMPT = """Summarize the conversation transcript above for the agent that will continue it. Use these sections:
1. User requests: every request and instruction the user gave, quoted or closely paraphrased.
2. Key facts and decisions: technical concepts, constraints and choices made, and why.
3. Files and code: the files read, created or changed (paths), what changed, and short snippets that matter.
4. Errors and fixes: what went wrong and how it was resolved.
5. Current state: what was being worked on right before this summary, and what is done.
6. Next step: the next action, if the task is not finished.
Reply with the summary only."""
SUMMARY_HEADER = (
    "This session is being continued from an earlier conversation that was compacted to fit the "
    "context window. Earlier turns ({n} messages) were summarized; the summary follows{kept}.\n\n"
    "<summary>\n{summary}\n</summary>"
)
CONTINUE_NOTE = ("\n\nContinue the work from where it left off, without asking the user further questions: "
                 "the task in progress is described above.")


class CompactError(Exception):
    """Compaction could not be done (nothing to summarize, or the summarizing call failed).
    The history it was given is unchanged."""


@dataclass
class CompactResult:
    """A compaction's outcome: the new history, the summary, the sizes before and after, and its cost."""

    history: list[WireMessage]  # [user(summary), ...kept turns verbatim]
    summary: str
    pre_tokens: int  # estimate of the history before (estimate_tokens)
    post_tokens: int  # estimate of the history after
    summarized_messages: int  # messages replaced by the summary
    kept_messages: int  # messages kept verbatim
    response: ModelResponse  # the summarizing call (usage, model)
    cost_usd: float = 0.0

    def boundary_data(self, trigger: str) -> dict[str, Any]:
        """The data of SystemMessage("compact_boundary") (Claude Code's trigger/pre_tokens, and more)."""
        return {"trigger": trigger, "pre_tokens": self.pre_tokens, "post_tokens": self.post_tokens,
                "summarized_messages": self.summarized_messages, "kept_messages": self.kept_messages,
                "cost_usd": self.cost_usd, "usage": self.response.usage.to_json()}


# --- estimates ------------------------------------------------------------------------------------

# --- the operation ----------------------------------------------------------------------------

def _cut(history: list[WireMessage], keep_last_turns: int) -> int:
    if keep_last_turns < 0:
        raise ValueError(f"keep_last_turns must be >= 0, got {keep_last_turns}")
    starts = turn_starts(history)
    if keep_last_turns >= len(starts):
        raise CompactError(f"nothing to compact: the history has {len(starts)} turns and "
                           f"{keep_last_turns} are to be kept")
    return starts[len(starts) - keep_last_turns] if keep_last_turns else len(history)


def _clip(text: str) -> str:
    if len(text) <= MAX_RESULT_CHARS:
        return text
    half = MAX_RESULT_CHARS // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


def _render_block(b: Any, names: dict[str, str]) -> str | None:
    if not isinstance(b, dict):
        return None
    kind = b.get("type")
    if kind == "text":
        return str(b.get("text", ""))
    if kind == "tool_use":
        names[str(b.get("id"))] = str(b.get("name"))
        return f"[tool call {b.get('name')} id={b.get('id')}] {json.dumps(b.get('input'), ensure_ascii=False)}"
    if kind == "tool_result":
        c = b.get("content")
        text = c if isinstance(c, str) else "\n".join(
            str(x.get("text", "")) if isinstance(x, dict) and x.get("type") == "text" else "[image]"
            for x in (c if isinstance(c, list) else []))
        tid = str(b.get("tool_use_id"))
        err = " (error)" if b.get("is_error") else ""
        return f"[result of {names.get(tid, 'tool')} id={tid}{err}]\n{_clip(text)}"
    if kind == "image":
        return "[image]"
    return None  # thinking (private, signed), redacted thinking, unknown blocks: not summarized


def render_transcript(messages: list[WireMessage]) -> str:
    """The messages as plain text for the summarizing call."""
    names: dict[str, str] = {}
    parts: list[str] = []
    for m in messages:
        role = str(m.get("role"))
        content = m.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": str(content)}]
        texts = [t for t in (_render_block(b, names) for b in blocks) if t]
        if texts:
            parts.append(f"### {role}\n" + "\n".join(texts))
    return "\n\n".join(parts)


@dataclass
class SummaryPlan:
    """The summarizing calls for history[:cut]: one per transcript chunk, each chunk's request
    carrying the summary so far (a rolling summary), so that every request fits a window W
    smaller than the history itself. One chunk: a single call."""

    cut: int
    chunks: list[str]
    instructions: str | None = None
    max_tokens: int | None = None  # the summary's output limit (a part of W), None: the model's own

    def request(self, i: int, summary_so_far: str | None) -> ModelRequest:
        n = len(self.chunks)
        part = f" (part {i + 1} of {n})" if n > 1 else ""
        prompt = f"<transcript{part}>\n{self.chunks[i]}\n</transcript>\n\n{SUMMARY_PROMPT}"
        if summary_so_far is not None:
            prompt = (f"<summary_so_far>\n{summary_so_far}\n</summary_so_far>\n\n{prompt}\nThe summary so far covers "
                      "the earlier parts of the transcript: merge it with this part into one summary.")
        if self.instructions:
            prompt += f"\n\nAdditional instructions for this summary:\n{self.instructions}"
        return ModelRequest(SUMMARY_SYSTEM, [], [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
                            self.max_tokens)


def chunk_budget(window: int, chars_per_token: float = 4.0) -> tuple[int, int]:
    """(transcript characters per summarizing call, the summary's max_tokens) for a window W: what
    is left of W after the summarizing prompt itself, the summary so far and the new summary (a
    eighth of W each; the summary's limit is sent only when it is below the 4096 tokens every
    model allows), with a tenth to spare for the estimate."""
    out = max(64, min(window // 8, 4_096))
    overhead = (len(SUMMARY_SYSTEM) + len(SUMMARY_PROMPT) + 300) / chars_per_token
    return max(200, int((window * 0.9 - 2 * out - overhead) * chars_per_token)), out


def plan_summary(history: list[WireMessage], keep_last_turns: int, instructions: str | None = None,
                 window: int | None = None, chars_per_token: float = 4.0) -> SummaryPlan:
    """The summarizing calls for all but the last `keep_last_turns` turns (raises CompactError).
    With a window W the transcript is cut in chunks that fit it (`chunk_budget`): messages stay
    whole where they can, a message larger than a chunk is split."""
    cut = _cut(history, keep_last_turns)
    whole = render_transcript(history[:cut])
    if window is None or len(whole) / chars_per_token + 500 <= 0.95 * window:  # fits: one call
        return SummaryPlan(cut, [whole], instructions)
    max_chars, out = chunk_budget(window, chars_per_token)
    chunks: list[str] = []
    for m in history[:cut]:
        piece = render_transcript([m])
        while len(piece) > max_chars:  # one message larger than a chunk: split it
            chunks.append(piece[:max_chars])
            piece = piece[max_chars:]
        if chunks and len(chunks[-1]) + len(piece) + 2 <= max_chars:
            chunks[-1] += "\n\n" + piece
        elif piece:
            chunks.append(piece)
    return SummaryPlan(cut, chunks or [""], instructions, out if out < 4_096 else None)


def finish(history: list[WireMessage], cut: int, response: ModelResponse, cost_usd: float = 0.0) -> CompactResult:
    """Build the compacted history from the last summarizing call's response (raises CompactError).
    `cost_usd`: what the summarizing calls cost (as `summarize` charged them)."""
    summary = text_of(response.content).strip()
    if response.stop_reason == "refusal" or not summary:
        raise CompactError(f"the summarizing call returned no summary (stop_reason {response.stop_reason!r})")
    tail = history[cut:]
    kept = f", then the last {len(tail)} messages verbatim" if tail else ""
    text = SUMMARY_HEADER.format(n=cut, kept=kept, summary=summary)
    if history and history[-1].get("role") == "user" and not tail:
        text += CONTINUE_NOTE  # mid-task with nothing kept: say what to do with the summary
    new: list[WireMessage] = [{"role": "user", "content": [{"type": "text", "text": text}]}, *tail]
    check_inv(new if new[-1].get("role") == "user" else [*new, {"role": "user", "content": [{"type": "text", "text": "."}]}])
    return CompactResult(new, summary, estimate_tokens(history), estimate_tokens(new), cut, len(tail),
                         response, cost_usd)


async def summarize(history: list[WireMessage], plan: SummaryPlan,
                    call: Callable[[ModelRequest], AsyncIterator[Any]],
                    charge: Callable[[ModelResponse], float]) -> AsyncIterator[Any]:
    """The one compaction: the summarizing calls of `plan` (one per chunk, each given the summary
    so far), then the compacted history. `call(request)` makes one call and yields its events, its
    ModelResponse among them (the loop streams it through its observer; `compact` completes it);
    `charge(response)` counts the response's cost where the caller keeps it and returns it (the
    catalog's `call_cost`). Yields the calls' other events (api_retry) and, last, the
    CompactResult. Raises CompactError when a call gives no summary; a call's own errors pass."""
    summary: str | None = None
    response: ModelResponse | None = None
    spent = 0.0
    n = len(plan.chunks)
    for i in range(n):
        response = None
        async for ev in call(plan.request(i, summary)):
            if isinstance(ev, ModelResponse):
                response = ev
            else:
                yield ev
        if response is None:
            raise CompactError("the summarizing call returned no response")
        spent += charge(response)
        summary = text_of(response.content).strip()
        if i < n - 1 and (response.stop_reason == "refusal" or not summary):
            raise CompactError(f"the summarizing call returned no summary of part {i + 1} of {n} "
                               f"(stop_reason {response.stop_reason!r})")
    assert response is not None  # a plan has at least one chunk
    yield finish(history, plan.cut, response, spent)


async def compact(history: list[WireMessage], model: Model, *, keep_last_turns: int = DEFAULT_KEEP_TURNS,
                  instructions: str | None = None, prices: dict[str, Price] | None = None,
                  window: int | None = None) -> CompactResult:
    """Summarize all but the last `keep_last_turns` turns of `history` with one call to `model`
    (with `window`: one call per chunk that fits it, each given the summary so far).

    `history` satisfies Inv, or is a final history (Inv, then one closing assistant message);
    the result is of the same kind. `history` itself is never changed. Raises CompactError
    when there is nothing to summarize or the call fails."""
    plan = plan_summary(history, keep_last_turns, instructions, window)

    async def call(request: ModelRequest) -> AsyncIterator[ModelResponse]:
        try:
            yield await complete(model, request)
        except ModelError as e:
            raise CompactError(f"the summarizing call failed: {e}") from e

    def charge(r: ModelResponse) -> float:
        return call_cost(r.usage, r.model, r.cost_usd, prices, priced_as=model.name)

    async for ev in summarize(history, plan, call, charge):
        if isinstance(ev, CompactResult):
            return ev
    raise CompactError("the summarizing call returned no response")  # (summarize ends with a result)
