"""Room: loop. The model call a = M(h): its request, its stream (interruptible under a RunControl),
pause continuations, charging, and the context window: discovered from the server, learnt from an
overflow error and fitted by compaction."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from .. import idle
from ..blocks import (
    TextBlock,
    ToolUseBlock,
    blocks_to_wire,
    text_of,
    tool_uses,
)
from ..gate.shell import bashlexload
from ..ids import TOOL_USE_ID, new_tool_use_id
from ..messages import (
    Message,
    ResultMessage,
    StreamEvent,
    SystemMessage,
)
from ..models.base import STOP_REASONS, ModelError, ModelRequest, ModelResponse
from ..tokens import estimate_tokens
from .compaction import compact
from .run import Run
from .state import MAX_OVERFLOW_RETRIES, RunError
from .step import Finish
from .stream import stream


async def call_model(run: Run) -> AsyncIterator[Any]:
    """a = M(h): one model call (plus continuations of a paused turn), timed and charged.

    A paused turn (pause_turn) is sent back for the model to continue, at most
    max_pause_continuations times. A request the server refuses as over its context window W
    (in its own words: models/window.py) teaches W (remembered per base URL and model); h is
    compacted to fit (context.py, in chunks when h is larger than W) and the same step is
    retried, at most MAX_OVERFLOW_RETRIES times. When even the minimum cannot fit, the error
    says what to shrink. Yields a ResultMessage, then Finish() (and no response), only when that
    compaction spent the budget. (One generator for both loops: one around another costs a turn
    ~6,500 instructions, as much as its model call's own work on the scripted model.)"""
    s, most = run.state, run.deps.options.max_pause_continuations
    for overflows in range(MAX_OVERFLOW_RETRIES + 1):
        try:
            s.inv.check(s.h)  # Inv on exactly what the model is about to see (Thm 3.4)
            req = request(run)
            content: list[Any] = []  # the parts of a paused turn before this call's
            for attempt in range(most + 1):
                t0, parser_pending = time.perf_counter(), _bash_parser_when_idle(run)
                a: ModelResponse | None = None
                streamed: StreamedIds | None = None
                try:
                    async for ev in run.obs.model_call(run, req, stream(run, req)):  # (NULL: the events as they are)
                        if isinstance(ev, ModelResponse):
                            a = ev
                        elif type(ev) is StreamEvent:  # (include_partial_messages only)
                            streamed = streamed or StreamedIds(s.inv.tool_ids, content)
                            yield streamed.event(ev)
                        else:
                            yield ev
                finally:
                    _call_ended(run, t0, parser_pending, attempt)
                a = _charged(run, a, content, streamed.fresh if streamed is not None else None)
                if a.stop_reason != "pause_turn" or tool_uses(a.content) or s.budget.exhausted():
                    yield a  # (a paused turn that reached the budget is not continued: Prop 5.4)
                    return
                content = a.content  # pause_turn: send the partial turn back so the model continues
                if attempt < most:
                    s.h.append({"role": "assistant", "content": blocks_to_wire(content)})
            raise RunError(f"the model paused its turn more than {most} times")
        except ModelError as e:
            async for m in fit_window(run, _overflow(run, e, overflows), overflows, str(e)):
                yield m
                if isinstance(m, ResultMessage):  # (compacting to fit W spent B: the run ends with it)
                    yield Finish()
                    return


def _overflow(run: Run, e: ModelError, overflows: int) -> Any:
    """The context-window overflow `e` reports (models/window.py); any other error, or one more
    overflow than MAX_OVERFLOW_RETRIES compactions fixed, is raised."""
    from ..models.window import parse_overflow  # (imported on a failure only: start-up)

    over = parse_overflow(str(e)) if e.status in (None, 400, 413) else None
    if over is None:
        raise e
    if overflows == MAX_OVERFLOW_RETRIES:
        raise RunError(f"{e} (still over the context window of {run.compactor.window} tokens after "
                       f"{overflows} compactions)") from e
    return over


def _call_ended(run: Run, t0: float, parser_pending: bool, attempt: int) -> None:
    """However a call ended: its time counted, the Bash parser's idle wish dropped, and the
    paused partial turn it continued dropped from h."""
    run.state.api_seconds += time.perf_counter() - t0
    if parser_pending:  # (only a wait on this call's answer is the model thinking)
        idle.forget(bashlexload.warm)
    if attempt:
        run.state.h.drop_last()  # drop the paused partial turn sent for continuation


def _bash_parser_when_idle(run: Run) -> bool:
    """A run that may call Bash gets the Bash parser loaded while the model thinks (when a read
    from the server has waited: idle.py), so that its first Bash verdict need not wait ~0.2 s
    for bashlex's grammar tables (gate/shell/bashlexload.py). A quick answer loads nothing."""
    if "Bash" not in run.deps.tools or bashlexload.loaded():
        return False
    idle.when_idle(bashlexload.warm)
    return True


def _charged(run: Run, a: ModelResponse | None, before: list[Any], streamed: dict[Any, str] | None) -> ModelResponse:
    """The call's response, charged, after the parts of a paused turn (`before`), as the
    conversation can keep it (sendable; `streamed`: the ids its partial events showed replaced)."""
    if a is None:
        raise ModelError(f"model {run.deps.model.name!r} returned no response")
    run.charge(a)
    if a.stop_reason not in STOP_REASONS:
        raise RunError(f"model returned an unknown stop_reason {a.stop_reason!r}")
    if before:
        a.content = before + a.content
    for b in a.content:  # (the common answer has neither: one look at each block)
        if streamed or (type(b) is TextBlock and (not b.text or b.text.isspace())) or \
                (type(b) is ToolUseBlock and (b.id in run.state.inv.tool_ids or not good_id(b.id))):
            a.blank_text = text_of(a.content)  # (the result when nothing but blank text was said)
            a.content = sendable(a.content, run.state.inv.tool_ids, streamed)
            break
    return a


def sendable(content: list[Any], taken: set[str], streamed: dict[Any, str] | None = None) -> list[Any]:
    """A response's blocks as the conversation keeps them, so that every later request is one the
    Messages API accepts: a text block with no text or only whitespace is left out (the API refuses
    one: "text content blocks must contain non-whitespace text"; Claude Code 2.1.332 leaves it out
    too), and a tool call whose id the history already has (`taken`: a model that numbers its
    calls anew each answer, call_0, call_1, ...) gets a fresh one (the API refuses repeated
    tool_use ids; Claude Code runs the call and then sends a mangled history). The same repeated id
    twice in one answer gets one fresh id, so the loop still refuses that answer (turn.py). An id
    not of the API's shape (ids.TOOL_USE_ID: a hostile or broken server's `../x`, a space, 10 KB)
    is replaced the same way, by a fresh `toolu_` id: the API would refuse every later request of
    the session, and an id reaches file names and logs. The same blocks as the caller, the hooks,
    the tools, the transcript and a resume see them. `streamed`: the ids already replaced in the
    call's partial events (StreamedIds.fresh), kept as shown."""
    out: list[Any] = []
    fresh = {} if streamed is None else streamed
    ids = {b.id for b in content if type(b) is ToolUseBlock} | set(fresh.values())
    for b in content:
        if type(b) is TextBlock and (not b.text or b.text.isspace()):
            continue
        if type(b) is ToolUseBlock:
            if b.id in fresh:  # (the same id twice, or the id the stream showed)
                b.id = fresh[b.id]
            elif b.id in taken or not good_id(b.id):
                new = fresh[b.id] = fresh_id(b.id, taken, ids)
                ids.add(new)
                b.id = new
        out.append(b)
    return out


def fresh_id(old: Any, taken: set[str], ids: set[Any]) -> str:
    """A new id for the tool call id `old`, in neither `taken` nor `ids`: `old_N` for an id of the
    API's shape, else a fresh `toolu_` id."""
    k = len(taken) + 1  # (from the count of ids: a model that reuses one id every turn finds a free
    new = f"{old}_{k}" if good_id(old) else new_tool_use_id()  # one at once, not after one look per turn)
    while new in taken or new in ids:
        k += 1
        new = f"{old}_{k}" if good_id(old) else new_tool_use_id()
    return new if good_id(new) else new_tool_use_id()  # (a good id near the length bound, and its number)


class StreamedIds:
    """The tool call ids of one model call's partial events (include_partial_messages), as the
    answer will keep them (sendable): an id sendable replaces is replaced in the event before it is
    streamed, so the stream and the assistant message name a call alike. `fresh` (old id -> new)
    is what sendable then applies to the answer's blocks, which come in the events' order. An id
    that is some earlier call's new id is replaced too (sendable, seeing the whole answer at once,
    would have chosen around it)."""

    __slots__ = ("fresh", "taken", "seen")

    def __init__(self, taken: set[str], before: list[Any]) -> None:
        self.fresh: dict[Any, str] = {}
        self.taken = taken
        self.seen = {b.id for b in before if type(b) is ToolUseBlock}  # (a paused turn's parts)

    def kept(self, old: Any) -> Any:
        """The id the answer keeps for the call the server named `old`."""
        if isinstance(old, (list, dict)):  # (no id: the answer is refused as malformed)
            return old
        if old in self.fresh:
            return self.fresh[old]
        if old in self.taken or not good_id(old) or old in self.fresh.values():
            new = self.fresh[old] = fresh_id(old, self.taken, self.seen | set(self.fresh.values()))
            return new
        self.seen.add(old)
        return old

    def event(self, ev: StreamEvent) -> StreamEvent:
        """`ev` with the ids it shows as kept (a copy when one changes; the model's reader keeps its
        own): an Anthropic `content_block_start` of a tool_use, an OpenAI chat chunk's `tool_calls`,
        a Responses event's `function_call` item (and the completed response's output)."""
        e = ev.event
        kind = e.get("type")
        if kind == "content_block_start":
            block = e.get("content_block")
            if isinstance(block, dict) and block.get("type") == "tool_use" and (new := self.kept(block.get("id"))) != block.get("id"):
                return replace(ev, event={**e, "content_block": {**block, "id": new}})
        elif kind is None and isinstance(choices := e.get("choices"), list):
            changed = [self._chat_choice(c) for c in choices]
            if any(c is not o for c, o in zip(changed, choices, strict=True)):
                return replace(ev, event={**e, "choices": changed})
        elif isinstance(kind, str) and kind.startswith("response."):
            return self._responses(ev)
        return ev

    def _chat_choice(self, choice: Any) -> Any:
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if not isinstance(delta, dict) or not isinstance(calls := delta.get("tool_calls"), list):
            return choice
        ids = [c.get("id") if isinstance(c, dict) else None for c in calls]
        kept = [self.kept(i) if i else i for i in ids]
        if kept == ids:
            return choice
        return {**choice, "delta": {**delta, "tool_calls": [{**c, "id": k} if k != i else c
                                                             for c, i, k in zip(calls, ids, kept, strict=True)]}}

    def _responses(self, ev: StreamEvent) -> StreamEvent:
        e = ev.event
        item, response = e.get("item"), e.get("response")
        if isinstance(item, dict) and (new := self._item(item)) is not item:
            return replace(ev, event={**e, "item": new})
        if isinstance(response, dict) and isinstance(output := response.get("output"), list):
            kept = [self._item(x) if isinstance(x, dict) else x for x in output]
            if any(k is not o for k, o in zip(kept, output, strict=True)):
                return replace(ev, event={**e, "response": {**response, "output": kept}})
        return ev

    def _item(self, item: dict[str, Any]) -> dict[str, Any]:
        if item.get("type") != "function_call" or not item.get("call_id"):
            return item
        new = self.kept(item["call_id"])
        return item if new == item["call_id"] else {**item, "call_id": new}


def good_id(uid: Any) -> bool:
    """Whether a model's tool call id has the shape the Messages API takes (ids.TOOL_USE_ID)."""
    return isinstance(uid, str) and TOOL_USE_ID.fullmatch(uid) is not None


async def fit_window(run: Run, over: Any, attempt: int, error: str) -> AsyncIterator[Message]:
    """Learn W from an overflow error and compact h to fit it (raises RunError when nothing can)."""
    from ..autocompact import turn_starts
    from ..models.window import remember, too_small

    c, d, s = run.compactor, run.deps, run.state
    fixed = len(d.system or "") + len(json.dumps(d.tool_defs))
    sent = fixed // 4 + estimate_tokens(s.h)  # our estimate of the refused request
    n = over.prompt_tokens or None
    cpt = 4.0 * sent / n if n else None  # the server's own count calibrates the estimate
    window = over.window or int(0.8 * min(c.window or n or sent, n or sent))  # no number said: below it
    c.learn(window, "error", cpt)
    remember(d.model, window)
    yield SystemMessage("context_window", {"context_window": window, "source": "error", "prompt_tokens": n,
                                           "error": error})
    if n is not None and n < 0.75 * window:  # the input fits: max_tokens did not (vLLM), now lowered
        return
    ratio = 4.0 / c.chars_per_token
    first = estimate_tokens(s.h[:1])
    if (fixed / 4 + first) * ratio >= 0.9 * window or not turn_starts(s.h):
        raise RunError(too_small(window, d.system, d.tool_defs, s.h, ratio, n))
    keep = (c.keep_turns(s.h) or 0) if attempt == 0 else 0
    async for m in compact(run, "overflow", keep_last_turns=keep,
                                extra={"context_window": window, "prompt_tokens": n}):
        if isinstance(m, SystemMessage) and m.subtype == "compact_error":
            raise RunError(f"{error}; compacting to fit the context window of {window} tokens failed: "
                           f"{m.data.get('error')}")
        yield m

async def discover_window(run: Run) -> SystemMessage | None:
    """W of an OpenAI-compatible server's model, asked before the first call when neither
    --context-window nor the catalog says it for a server of our own choosing (models/window.py)."""
    d, c = run.deps, run.compactor
    if d.options.context_window is not None or not getattr(d.model, "discovers_window", False):
        return None
    from ..models.window import discover

    window = await discover(d.model)
    if window is None:
        return None
    c.learn(window, "server")
    return SystemMessage("context_window", {"context_window": window, "source": "server"})

def request(run: Run) -> ModelRequest:
    """M(h)'s input, built for each call from what the call gets now."""
    d, o = run.deps, run.deps.options
    return ModelRequest(d.system, d.tool_defs, run.state.h, output_limit(run), effort=o.effort, thinking=o.thinking)


def output_limit(run: Run) -> int | None:
    """This call's max_tokens: the caller's, lowered to what is left of a window a server told
    (a server such as vLLM refuses input + max_tokens > W)."""
    d, c = run.deps, run.compactor
    want = d.options.max_tokens
    # (no window told: the caller's, without the getattr, which raises inside for most models)
    if c.source not in ("server", "error") or c.window is None:
        return want
    limit = want or getattr(d.model, "max_tokens", None)
    if not isinstance(limit, int):
        return want
    n = c.forecast(run.state.budget.calls, run.state.h, run._fixed_chars(), c.model_name)
    room = c.window - int(n * 4.0 / c.chars_per_token)
    return min(limit, max(64, room))
