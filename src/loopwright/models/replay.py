"""Room: providers (on models.base). Owns ReplayModel and Divergence; may import data types, bases
and models.base.

Record a real run, replay it as a test (`ScriptedModel.from_session(path_or_id)`): the model
responses of a recorded transcript (loopwright's, or Claude Code's) are given back in order, so
a run with a real model becomes an offline regression test of the tools, hooks and gate around
it. Before each response, what the replayed run sends since the previous response (the tool
results, hook context, queued text: the call's new input) is compared with what the recording
sent there; when they differ the replay has diverged, and the Divergence names the model call
(the turn), what the recording sent and got back, and what this run sent. By default it ends
the run (an error result with the report, `error_during_execution`: never a crash); with
`on_divergence="continue"` the recorded response is given anyway and each divergence is kept
in `model.divergences`. A run that asks for more calls than were recorded diverges too.

What is compared: content blocks, with a tool result's string content as one text block and
`cache_control` left out; the first call's input (the prompt, with the memory files and the
environment of the machine it ran on) is not compared. Not replayed: subagents' calls (their
own transcripts), compacted sessions (a compact_boundary line is a ValueError), a Claude Code
transcript's side chains.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..blocks import WireMessage, blocks_from_wire, tool_uses
from ..home import sessions_root
from ..ids import SAFE_ID
from ..usage import Usage
from .base import ModelError, ModelEvent, ModelRequest, ModelResponse

OnDivergence = Literal["stop", "continue"]
SHOWN = 1500  # characters of each side a divergence's message shows


@dataclass(slots=True)
class RecordedCall:
    """One model call of a recording: the input it was sent since the previous response (blocks),
    and the response (a wire assistant message with stop_reason, usage, model)."""

    sent: list[Any]
    response: dict[str, Any]


@dataclass(slots=True)
class Divergence:
    """The replayed run sent model call `turn` (1-based) other input than the recording did:
    `expected` (the recording's), `actual` (this run's), and the response the recording got."""

    turn: int
    expected: list[Any] | None  # None: the recording has no such call
    actual: list[Any]
    recorded_response: list[Any] = field(default_factory=list)

    def __str__(self) -> str:
        def show(x: Any) -> str:
            s = json.dumps(x, ensure_ascii=False)
            return s if len(s) <= SHOWN else s[:SHOWN] + f"... ({len(s)} characters)"

        if self.expected is None:
            return f"replay diverged at model call {self.turn}: the recording has no call {self.turn}; this run sent {show(self.actual)}"
        return (f"replay diverged at model call {self.turn}: the recording sent {show(self.expected)} (and got "
                f"{show(self.recorded_response)}), this run sent {show(self.actual)}")


def normalized(blocks: list[Any]) -> list[Any]:
    """Blocks as compared: a string as a text block, a tool result's string content as one text
    block (none for ""), is_error as a bool, no cache_control."""
    out: list[Any] = []
    for b in blocks:
        if isinstance(b, str):
            b = {"type": "text", "text": b}
        if not isinstance(b, dict):
            out.append(b)
            continue
        b = {k: v for k, v in b.items() if k != "cache_control"}
        if b.get("type") == "tool_result":
            c = b.get("content")
            content = ([{"type": "text", "text": c}] if c else []) if isinstance(c, str) else normalized(c or [])
            b = {"type": "tool_result", "tool_use_id": b.get("tool_use_id"), "content": content,
                 "is_error": bool(b.get("is_error"))}
        out.append(b)
    return out


def _content(msg: dict[str, Any]) -> list[Any]:
    c = msg.get("content")
    return [{"type": "text", "text": c}] if isinstance(c, str) else list(c or [])


def calls_from_lines(lines: list[dict[str, Any]]) -> list[RecordedCall]:
    """The model calls of a transcript's lines (loopwright's or Claude Code's): each assistant
    message and what was sent before it; Claude Code's lines of one message (one block each,
    the same message id) are joined."""
    calls: list[RecordedCall] = []
    sent: list[Any] = []
    last_id: str | None = None
    for ln in lines:
        kind = ln.get("type")
        if kind == "system" and ln.get("subtype") == "compact_boundary":
            raise ValueError("a compacted session cannot be replayed (its history was summarized mid-run)")
        if kind not in ("user", "assistant") or ln.get("isSidechain") or (ln.get("isMeta") and not ln.get("hookText")):
            continue  # (a hook's feedback, marked isMeta and hookText, was sent to the model)
        msg = ln.get("message")
        if not isinstance(msg, dict):
            continue
        if kind == "user":
            sent.extend(_content(msg))
            continue
        mid = msg.get("id")
        if calls and not sent and mid is not None and mid == last_id:  # Claude Code: the same message, one more block
            prev = calls[-1].response
            prev["content"] = [*prev["content"], *_content(msg)]
            for k in ("stop_reason", "usage"):
                if msg.get(k) is not None:
                    prev[k] = msg[k]
            continue
        calls.append(RecordedCall(sent, {**msg, "content": _content(msg)}))
        sent, last_id = [], mid
    return calls


def _read(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            raise ValueError(f"{path}: line {n} is not JSON: not a transcript") from None
        if isinstance(obj, dict):
            out.append(obj)
    return out


def find_transcript(path_or_id: str | Path, sessions_dir: str | Path | None = None) -> Path:
    """A transcript's path: `path_or_id` as a path (a Path, or text with a `/` or ending in
    .jsonl), else a session id, looked up in loopwright's sessions, then Claude Code's
    (~/.claude/projects). An id is never a path: one that is not a safe name is refused."""
    text = str(path_or_id)
    if isinstance(path_or_id, Path) or "/" in text or text.endswith(".jsonl"):
        p = Path(path_or_id).expanduser()
        if not p.is_file():
            raise FileNotFoundError(f"no transcript at {p}")
        return p
    if not SAFE_ID.fullmatch(text) or ".." in text:
        raise ValueError(f"{text!r} is neither a transcript path nor a session id")
    for root in (sessions_root(sessions_dir), Path.home() / ".claude" / "projects"):
        found = sorted(root.glob(f"*/{text}.jsonl")) if root.is_dir() else []
        if found:
            return found[0]
    raise FileNotFoundError(f"no session {text!r} in {sessions_root(sessions_dir)} or ~/.claude/projects")


class ReplayModel:
    """A model that gives back a recording's responses, checking each call's new input against
    the recording's (see the module's docstring). `divergences`: what differed."""

    has_own_cost = True  # the recorded cost (0 when the recording has none): no price needed

    def __init__(self, calls: list[RecordedCall], name: str = "replay", on_divergence: OnDivergence = "stop",
                 source: str = "") -> None:
        if on_divergence not in ("stop", "continue"):
            raise ValueError(f'on_divergence must be "stop" or "continue", not {on_divergence!r}')
        self.recorded, self.name, self.on_divergence, self.source = calls, name, on_divergence, source
        self.calls = 0
        self.divergences: list[Divergence] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.calls += 1
        k = self.calls
        actual = _since_last_response(request.messages)
        if k > len(self.recorded):
            d = Divergence(k, None, normalized(actual))
            self.divergences.append(d)
            raise ModelError(f"{d} ({self.source})" if self.source else str(d))
        rec = self.recorded[k - 1]
        if k > 1 and normalized(actual) != normalized(rec.sent):
            d = Divergence(k, normalized(rec.sent), normalized(actual), rec.response["content"])
            self.divergences.append(d)
            if self.on_divergence == "stop":
                raise ModelError(f"{d} ({self.source})" if self.source else str(d))
        yield _response(rec.response, self.name)


def _since_last_response(h: list[WireMessage]) -> list[Any]:
    """The blocks sent after the last assistant message (all of h's for the first call)."""
    i = len(h)
    while i > 0 and h[i - 1].get("role") != "assistant":
        i -= 1
    return [b for m in h[i:] for b in _content(m)]


def _response(msg: dict[str, Any], name: str) -> ModelResponse:
    content = blocks_from_wire(msg["content"])
    stop = msg.get("stop_reason") or ("tool_use" if tool_uses(content) else "end_turn")
    raw = msg.get("usage")
    usage: dict[str, Any] = raw if isinstance(raw, dict) else {}
    cost = usage.get("cost_usd")
    return ModelResponse(content, stop, Usage.from_json(usage), msg.get("model") or name,
                         float(cost) if isinstance(cost, (int, float)) else 0.0)


def from_session(path_or_id: str | Path, sessions_dir: str | Path | None = None,
                 on_divergence: OnDivergence = "stop") -> ReplayModel:
    """A ReplayModel of a recorded transcript (ScriptedModel.from_session)."""
    path = find_transcript(path_or_id, sessions_dir)
    calls = calls_from_lines(_read(path))
    if not calls:
        raise ValueError(f"{path}: no model responses to replay")
    return ReplayModel(calls, on_divergence=on_divergence, source=str(path))


__all__ = ["Divergence", "RecordedCall", "ReplayModel", "calls_from_lines", "find_transcript", "from_session",
           "normalized"]
