"""Room: view. Owns a transcript read for looking at; may import context, models.catalog, usage.

A transcript read for looking at: loopwright's own JSONL or Claude Code's, as calls and a timeline.

Owns: parsing both transcript formats into `SessionView` (one `Call` per model API call, with
its exact n_k, cache figures, cost and latency; a timeline of what happened). Imports only
data-type rooms (usage, context's window table) and never writes anything.

Claude Code writes one line per content block of a response, each repeating the message id and
the usage: lines are grouped by message id so each API call is counted once. Its subagents
(sidechains) are kept nested; entry types this reader does not know are shown raw, never fatal.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..autocompact import default_context_window
from ..models.catalog import cost_of
from ..usage import Usage

# How the tools say they cut their output (Bash, Read, Grep, Glob), and Claude Code's equivalents.
TRUNCATED = re.compile(r"characters of output truncated\]|\[\.\.\. (?:output|line|notebook) truncated|"
                       r"Results are truncated|output truncated at|Output too large")
# Tool names that start a subagent: loopwright's Agent, Claude Code's Task (and Agent).
AGENT_TOOLS = ("Agent", "Task")


@dataclass
class Call:
    """One model API call (seed Def 5.1: n_k is everything the model read)."""

    k: int
    model: str
    input_tokens: int  # uncached input
    cache_read: int
    cache_write: int
    output_tokens: int
    cost_usd: float | None
    latency_ms: float | None  # from the event before the call to its response
    stop_reason: str | None
    tools: list[str]
    line: int  # 1-based line of the response in the transcript
    after_compaction: bool = False  # the first call after a compact_boundary

    @property
    def n(self) -> int:
        return self.input_tokens + self.cache_read + self.cache_write


@dataclass
class Event:
    """One timeline entry. `kind`: prompt, text, thinking, tool_use, tool_result, system,
    result, queued, hook, rewind, fork, compact, raw."""

    kind: str
    text: str = ""
    title: str = ""
    call: int | None = None  # the call whose response this belongs to
    is_error: bool = False
    flags: list[str] = field(default_factory=list)  # denied, interrupted, cut off, ...
    tool_use_id: str | None = None
    children: list[SessionView] = field(default_factory=list)  # subagents under an Agent call


@dataclass
class SessionView:
    """What a page or `loopwright stats` shows of one transcript."""

    path: Path
    source: str  # "loopwright" | "claude-code"
    session_id: str = ""
    calls: list[Call] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    subtype: str | None = None
    num_turns: int | None = None  # T, tool-use turns (from the result, else counted)
    total_cost_usd: float | None = None
    duration_ms: float | None = None
    window: int | None = None  # W
    warnings: list[str] = field(default_factory=list)  # lines that could not be read, and why
    lines_read: int = 0

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(c.model for c in self.calls if c.model))

    @property
    def cost(self) -> float:
        """The run results' own total when recorded (loopwright: subagents and compaction
        included), else the calls' costs plus the nested subagents' (Claude Code)."""
        if self.total_cost_usd is not None:
            return self.total_cost_usd
        return (sum(c.cost_usd or 0.0 for c in self.calls)
                + sum(sub.cost for e in self.events for sub in e.children))

    @property
    def peak_n(self) -> int:
        return max((c.n for c in self.calls), default=0)

    @property
    def cache_hit_rate(self) -> float | None:
        """Share of input tokens read from the cache."""
        total = sum(c.n for c in self.calls)
        return sum(c.cache_read for c in self.calls) / total if total else None

    def growth(self, i: int) -> int | None:
        """n_k - n_{k-1} = a_{k-1} + r_{k-1} (seed Prop 5.2); None for the first call and
        across a compaction, where the history was replaced."""
        if i == 0 or self.calls[i].after_compaction:
            return None
        return self.calls[i].n - self.calls[i - 1].n

    def forecast_calls_left(self, recent: int = 5) -> int | None:
        """Calls left before W at the observed growth (seed §5: K <= (W - s)/c + 1)."""
        if not self.window or not self.calls:
            return None
        grows = [g for i in range(max(0, len(self.calls) - recent), len(self.calls))
                 if (g := self.growth(i)) is not None]
        if not grows or sum(grows) <= 0:
            return None
        c = sum(grows) / len(grows)
        return max(0, int((self.window - self.calls[-1].n) // c))

    @property
    def tool_use_turns(self) -> int:
        if self.num_turns is not None:
            return self.num_turns
        return sum(1 for c in self.calls if c.tools)


class NotATranscript(ValueError):
    """Nothing in the file could be read as a transcript."""


# --- reading -----------------------------------------------------------------------------------

def _ts(line: dict[str, Any]) -> float | None:
    t = line.get("timestamp")
    if not isinstance(t, str):
        return None
    try:
        return datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _content(message: Any) -> list[dict[str, Any]]:
    c = message.get("content") if isinstance(message, dict) else None
    if isinstance(c, str):
        return [{"type": "text", "text": c}]
    return [b for b in c if isinstance(b, dict)] if isinstance(c, list) else []


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict) and b.get("type") == "text":
                parts.append(str(b.get("text", "")))
            elif isinstance(b, dict):
                parts.append(f"[{b.get('type')} block]")
        return "\n".join(parts)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


MAX_COUNT = 10**13  # more tokens than any session spends: a number past it is not a count


def _int(v: Any) -> int:
    """A token count as written, or 0 for anything that is not one (a string, a negative or absurd number)."""
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_COUNT else 0


def read_jsonl(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """(line number, object) for each readable line, and a warning for each that is not."""
    out: list[tuple[int, dict[str, Any]]] = []
    warnings: list[str] = []
    with open(path, "rb") as f:
        data = f.read()
    raws = data.split(b"\n")
    last = len(raws) - (1 if raws and raws[-1] == b"" else 0)
    for i, raw in enumerate(raws[:last], 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            torn = i == last and not data.endswith(b"\n")
            warnings.append(f"line {i}: {'torn last line (a crash mid-write?)' if torn else 'not JSON'}; skipped")
            continue
        if not isinstance(obj, dict):
            warnings.append(f"line {i}: not a JSON object; skipped")
            continue
        out.append((i, obj))
    return out, warnings


def detect_source(lines: list[tuple[int, dict[str, Any]]]) -> str | None:
    for _, ln in lines:
        if "isSidechain" in ln or "userType" in ln or ln.get("type") in ("queue-operation", "summary", "attachment"):
            return "claude-code"
        if ln.get("type") in ("system", "result", "user", "assistant") and "sessionId" in ln:
            if isinstance(ln.get("message"), dict) and "id" in ln["message"]:
                return "claude-code"
            return "loopwright"
    return None


def load_view(path: str | Path) -> SessionView:
    """Read a loopwright or Claude Code transcript (and its subagents' files)."""
    p = Path(path)
    lines, warnings = read_jsonl(p)
    source = detect_source(lines)
    if source is None:
        raise NotATranscript(f"{p}: not a loopwright or Claude Code transcript"
                             + (f" ({warnings[0]})" if warnings else " (no transcript lines)"))
    view = SessionView(path=p, source=source, warnings=warnings, lines_read=len(lines))
    if source == "loopwright":
        _read_loopwright(view, lines)
    else:
        _read_claude_code(view, lines)
    _attach_subagents(view)
    if view.window is None and view.calls:
        view.window = default_context_window(view.calls[-1].model)
    return view


class _Builder:
    """State shared by both readers: pending tool calls, call numbering, compaction marks."""

    def __init__(self, view: SessionView) -> None:
        self.view = view
        self.tool_events: dict[str, Event] = {}  # tool_use id -> its tool_use event
        self.results: dict[str, Event] = {}  # tool_use id -> its tool_result event
        self.unsettled = 0.0  # cost of the calls since the last result line (a run cut short has none)
        self.compacted = False
        self.prev_ts: float | None = None
        self.first_ts: float | None = None
        self.last_ts: float | None = None

    def stamp(self, line: dict[str, Any]) -> None:
        t = _ts(line)
        if t is not None:
            self.first_ts = t if self.first_ts is None else self.first_ts
            self.last_ts = t

    def add_call(self, lineno: int, message: dict[str, Any], blocks: list[dict[str, Any]], ts: float | None,
                 ) -> Call:
        usage = _dict(message.get("usage"))
        model = str(message.get("model") or usage.get("model") or "")
        for key in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
            v = usage.get(key)
            if v is not None and _int(v) != v:
                self.view.warnings.append(f"line {lineno}: usage.{key} = {str(v)[:40]} is not a token count; "
                                          "counted as 0")
        cost = usage.get("cost_usd")
        if not isinstance(cost, int | float) or isinstance(cost, bool) or not 0 <= cost < 1e9:
            if cost is not None:
                self.view.warnings.append(f"line {lineno}: usage.cost_usd = {str(cost)[:40]} is not a cost; "
                                          "priced from the tokens")
            cost = _price(model, usage)
        call = Call(
            k=len(self.view.calls) + 1, model=model, input_tokens=_int(usage.get("input_tokens")),
            cache_read=_int(usage.get("cache_read_input_tokens")),
            cache_write=_int(usage.get("cache_creation_input_tokens")),
            output_tokens=_int(usage.get("output_tokens")), cost_usd=float(cost) if cost is not None else None,
            latency_ms=(ts - self.prev_ts) * 1000 if ts is not None and self.prev_ts is not None else None,
            stop_reason=message.get("stop_reason") if isinstance(message.get("stop_reason"), str) else None,
            tools=[str(b.get("name")) for b in blocks if b.get("type") == "tool_use"], line=lineno,
            after_compaction=self.compacted)
        self.compacted = False
        self.unsettled += call.cost_usd or 0.0
        self.view.calls.append(call)
        for b in blocks:
            self.block_event(b, call.k)
        return call

    def block_event(self, b: dict[str, Any], k: int) -> None:
        kind = b.get("type")
        ev: Event
        if kind == "text":
            ev = Event("text", text=str(b.get("text", "")), call=k)
        elif kind in ("thinking", "redacted_thinking"):
            ev = Event("thinking", text=str(b.get("thinking") or "(redacted)"), call=k)
        elif kind == "tool_use":
            tid = str(b.get("id", ""))
            ev = Event("tool_use", title=str(b.get("name")), call=k, tool_use_id=tid,
                       text=json.dumps(b.get("input"), ensure_ascii=False, indent=1))
            self.tool_events[tid] = ev
        else:
            ev = Event("raw", title=str(kind), call=k, text=json.dumps(b, ensure_ascii=False))
        self.view.events.append(ev)

    def user_blocks(self, blocks: list[dict[str, Any]], *, prompt: bool, extra: dict[str, Any]) -> None:
        # text after tool results in the same message: typed while the tools ran (client.send)
        after_results = any(b.get("type") == "tool_result" for b in blocks)
        for b in blocks:
            if b.get("type") == "tool_result":
                text = _text_of(b.get("content"))
                flags = []
                if b.get("is_error") and text.startswith("Permission denied"):
                    flags.append("denied")
                if b.get("is_error") and "nterrupted" in text[:200]:
                    flags.append("interrupted")
                if TRUNCATED.search(text):
                    flags.append("cut off")
                tid = str(b.get("tool_use_id", ""))
                use = self.tool_events.get(tid)
                ev = Event("tool_result", text=text, is_error=bool(b.get("is_error")), flags=flags, tool_use_id=tid,
                           title=use.title if use else "tool result")
                self.results[tid] = ev
                self.view.events.append(ev)
            elif b.get("type") == "text":
                kind = "prompt" if prompt else ("queued" if after_results or extra.get("queued") else "text_user")
                self.view.events.append(Event(kind, text=str(b.get("text", ""))))
            else:
                self.view.events.append(Event("raw", title=str(b.get("type")), text=json.dumps(b)))

    def finish(self) -> None:
        if self.view.total_cost_usd is not None and self.unsettled:
            self.view.total_cost_usd += self.unsettled
        if self.view.duration_ms is None and self.first_ts is not None and self.last_ts is not None:
            self.view.duration_ms = (self.last_ts - self.first_ts) * 1000


def _price(model: str, usage: dict[str, Any]) -> float | None:
    if not model:
        return None
    u = Usage(input_tokens=_int(usage.get("input_tokens")), output_tokens=_int(usage.get("output_tokens")),
              cache_creation_input_tokens=_int(usage.get("cache_creation_input_tokens")),
              cache_read_input_tokens=_int(usage.get("cache_read_input_tokens")))
    return cost_of(u, model)


def _bad_line(view: SessionView, lineno: int, ln: dict[str, Any], e: Exception) -> None:
    """A line whose fields have types or values this reader cannot use: a note, and the line raw."""
    view.warnings.append(f"line {lineno}: a field of an unexpected type or value ({type(e).__name__}: "
                         f"{str(e)[:120]}); shown raw")
    view.events.append(Event("raw", title=f"line {lineno} (not understood)",
                             text=json.dumps(ln, ensure_ascii=False, default=str)[:2000]))


def _read_loopwright(view: SessionView, lines: list[tuple[int, dict[str, Any]]]) -> None:
    b = _Builder(view)
    for lineno, ln in lines:
        try:
            kind = ln.get("type")
            ts = _ts(ln)
            b.stamp(ln)
            view.session_id = view.session_id or str(ln.get("sessionId") or "")
            message = _dict(ln.get("message"))
            if kind == "assistant":
                b.add_call(lineno, message, _content(message), ts)
            elif kind == "user" and ln.get("hookText"):
                _hook_line(view, message)
            elif kind == "user":
                extra = {k: v for k, v in ln.items() if k not in ("message",)}
                b.user_blocks(_content(message), prompt=bool(ln.get("isPrompt")), extra=extra)
            elif kind == "system":
                _system_line(view, b, ln)
            elif kind == "result":
                _result_line(view, b, _dict(ln.get("result")))
            elif kind == "rewind":
                view.events.append(Event("rewind", title="rewind", text=f"rewound to {ln.get('toUuid')}"))
            else:
                view.events.append(Event("raw", title=str(kind), text=json.dumps(ln, ensure_ascii=False)[:2000]))
            if ts is not None:
                b.prev_ts = ts
        except (TypeError, ValueError, KeyError, AttributeError, OverflowError, IndexError) as e:
            _bad_line(view, lineno, ln, e)
    b.finish()


def _system_line(view: SessionView, b: _Builder, ln: dict[str, Any]) -> None:
    sub = str(ln.get("subtype", ""))
    data = _dict(ln.get("data"))
    if sub in ("compact_boundary", "init") and isinstance(data.get("context_window"), int):
        view.window = data["context_window"]
    if sub == "compact_boundary":
        b.compacted = True
        view.events.append(Event("compact", title="compaction", text=_compact_text(data)))
    elif sub == "init":
        view.events.append(Event("system", title="init", text=_kv(data, ("model", "cwd", "permission_mode",
                                                                           "max_turns", "max_budget_usd"))))
    elif sub == "fork":
        view.events.append(Event("fork", title="forked", text=f"from session {ln.get('forkedFrom')}"))
    else:
        kind = "hook" if "hook" in sub else "system"
        view.events.append(Event(kind, title=sub, text=json.dumps(data, ensure_ascii=False)))


def _result_line(view: SessionView, b: _Builder, r: dict[str, Any]) -> None:
    if isinstance(r.get("subtype"), str):  # one per run; a resumed session has several
        view.subtype = r["subtype"] if view.subtype is None else f"{view.subtype} → {r['subtype']}"
    if isinstance(r.get("num_turns"), int):
        view.num_turns = (view.num_turns or 0) + r["num_turns"]
    if isinstance(r.get("total_cost_usd"), int | float):  # includes compaction and subagents
        view.total_cost_usd = (view.total_cost_usd or 0.0) + float(r["total_cost_usd"])
        b.unsettled = 0.0
    if isinstance(r.get("duration_ms"), int | float):
        view.duration_ms = (view.duration_ms or 0.0) + float(r["duration_ms"])
    for d in r.get("permission_denials") or []:  # the loop's own record of its refusals
        ev = b.results.get(str(d.get("tool_use_id"))) if isinstance(d, dict) else None
        if ev is not None and "denied" not in ev.flags:
            ev.flags.append("denied")
    view.events.append(Event("result", title=str(r.get("subtype")), is_error=bool(r.get("is_error")),
                             text=str(r.get("result") or "")))


def _hook_line(view: SessionView, message: dict[str, Any]) -> None:
    """A user line that is a hook's feedback (hookText: Claude Code's and loopwright's transcripts),
    shown as the hook's, never as the user's words: "Stop hook feedback:\nREASON" (Claude Code's
    text) or the reminder loopwright sent (loop.state.hook_feedback)."""
    from ..loop.state import hook_feedback

    text = _text_of(message.get("content"))
    head, sep, rest = text.partition(" hook feedback:\n")
    fed = hook_feedback(text) or ((head, rest) if sep and head.isalpha() else ("", text))
    view.events.append(Event("hook", title=f"{fed[0] or 'a'} hook feedback", text=fed[1].strip()))


def _compact_text(data: dict[str, Any]) -> str:
    return _kv(data, ("trigger", "pre_tokens", "post_tokens", "summarized_messages", "kept_messages", "cost_usd"))


def _kv(data: dict[str, Any], keys: tuple[str, ...]) -> str:
    return ", ".join(f"{k}={data[k]}" for k in keys if k in data)


def _read_claude_code(view: SessionView, lines: list[tuple[int, dict[str, Any]]]) -> None:
    b = _Builder(view)
    sidechains: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    open_id: str | None = None  # the message id of the response being read
    # A subagent's own file (<session>/subagents/agent-*.jsonl) is all sidechain: read it as a whole.
    own_file = all(ln.get("isSidechain") for _, ln in lines if ln.get("type") in ("user", "assistant"))
    for lineno, ln in lines:
        try:
            kind = ln.get("type")
            if ln.get("isSidechain") and not own_file:
                sidechains.setdefault(str(ln.get("agentId") or ln.get("sessionId") or "sidechain"), []).append((lineno, ln))
                continue
            ts = _ts(ln)
            b.stamp(ln)
            view.session_id = view.session_id or str(ln.get("sessionId") or "")
            message = _dict(ln.get("message"))
            if kind == "assistant":
                mid = str(message.get("id") or f"line-{lineno}")
                blocks = _content(message)
                if mid == open_id and view.calls:  # another block of the same response: same call
                    call = view.calls[-1]
                    call.tools += [str(x.get("name")) for x in blocks if x.get("type") == "tool_use"]
                    if isinstance(message.get("stop_reason"), str):
                        call.stop_reason = message["stop_reason"]
                    for x in blocks:
                        b.block_event(x, call.k)
                else:
                    open_id = mid
                    b.add_call(lineno, message, blocks, ts)
                continue
            open_id = None if kind == "user" else open_id
            if kind == "user" and ln.get("hookText"):
                _hook_line(view, message)
            elif kind == "user":
                b.user_blocks(_content(message), prompt=not any(x.get("type") == "tool_result" for x in _content(message)),
                              extra={})
            elif kind == "system":
                sub = str(ln.get("subtype", ""))
                if sub == "compact_boundary":
                    b.compacted = True
                    meta = _dict(ln.get("compactMetadata"))
                    view.events.append(Event("compact", title="compaction", text=_kv(meta, ("trigger", "preTokens"))))
                else:
                    view.events.append(Event("system", title=sub or "system", text=str(ln.get("content") or "")))
            elif kind == "summary":
                view.events.append(Event("system", title="summary", text=str(ln.get("summary", ""))))
            else:  # attachments, queue operations, request shapes...: shown raw, folded
                view.events.append(Event("raw", title=str(kind), text=json.dumps(ln, ensure_ascii=False)[:2000]))
                continue
            if ts is not None:
                b.prev_ts = ts
        except (TypeError, ValueError, KeyError, AttributeError, OverflowError, IndexError) as e:
            _bad_line(view, lineno, ln, e)
    b.finish()
    for agent_id, side in sidechains.items():
        chain = SessionView(path=view.path, source="claude-code", session_id=agent_id, lines_read=len(side))
        _read_claude_code(chain, [(i, {**ln, "isSidechain": False}) for i, ln in side])
        view.events.append(Event("subagent", title=f"sidechain {agent_id}", children=[chain]))


def _attach_subagents(view: SessionView) -> None:
    """Nest `<session>/subagents/agent-*.jsonl` (both tools keep them there) under the Agent call
    whose prompt started them, in order."""
    folder = view.path.with_suffix("") / "subagents"
    if not folder.is_dir():
        return
    calls = [e for e in view.events if e.kind == "tool_use" and e.title in AGENT_TOOLS]
    used: set[int] = set()
    for f in sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime):
        try:
            sub = load_view(f)
        except (OSError, NotATranscript) as e:
            view.warnings.append(f"subagent transcript {f.name}: {e}")
            continue
        first = next((e.text for e in sub.events if e.kind == "prompt"), "")
        key = json.dumps(first[:200], ensure_ascii=False)[1:-1]  # as it stands in the call's JSON input
        target = next((i for i, e in enumerate(calls) if i not in used and first and key in e.text), None)
        if target is None:
            target = next((i for i in range(len(calls)) if i not in used), None)
        if target is None:
            view.events.append(Event("subagent", title=f"subagent {f.stem}", children=[sub]))
        else:
            used.add(target)
            calls[target].children.append(sub)
