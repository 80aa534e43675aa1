"""Room: sessions (beside execute). Owns reading a transcript back: torn lines, interrupted tool
calls and stray results repaired into a history that satisfies Inv."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..blocks import WireMessage, local_command_tail, wire_blocks
from ..ids import TOOL_USE_ID, new_tool_use_id
from ..invariant import InvariantViolation
from ..invariant import check as check_inv
from .store import INTERRUPTED_RESULT, LoadedSession

# --- reading and repairing ---------------------------------------------------------------------

_BATCH = 256  # lines parsed together (read_lines)


def read_lines(path: Path, notes: list[str] | None = None) -> list[dict[str, Any]]:
    """All whole lines of a transcript. A torn last line (a crash mid-write) or a line that is
    not a JSON object (garbage) is skipped, and said so in `notes`."""
    with open(path, "rb") as f:
        return _parsed(f.read().split(b"\n"), notes)


def _parsed(raws: list[bytes], notes: list[str] | None) -> list[dict[str, Any]]:
    """The JSON objects of a transcript's lines `raws` (read_lines)."""
    out: list[dict[str, Any]] = []
    bad: list[int] = []
    # _BATCH lines at a time joined into one JSON array: one parse for them (their dicts share their
    # key strings, which a parse per line would hold once per line for the whole session), never the
    # whole file joined (two more copies of it at once: an 11 MB transcript's read peaked at 54 MB,
    # now 31 MB). A batch with a torn or corrupt line is parsed a line at a time.
    for first in range(0, len(raws), _BATCH):
        batch = raws[first:first + _BATCH]
        try:
            objs = json.loads(b"[" + b",".join(r for r in batch if r.strip()) + b"]")
            if all(isinstance(o, dict) for o in objs):
                out += objs
                continue
        except ValueError:
            pass
        for n, raw in enumerate(batch, first + 1):
            if raw.strip():
                _one_line(raw, n == len(raws), n, out, bad, notes)
    if bad and notes is not None:
        shown = ", ".join(map(str, bad[:10])) + (", ..." if len(bad) > 10 else "")
        notes.append(f"skipped {len(bad)} line(s) that are not JSON objects (line {shown})")
    return out


_BOUNDARY = b'"subtype":"compact_boundary"'  # (as the recorder writes it: JsonlWriter's compact JSON)
_UUID = re.compile(rb'"uuid":"([^"\\]*)"')  # a line's uuid key (a string's quotes are escaped: not in one)


def _from_last_compaction(data: bytes) -> list[dict[str, Any]] | None:
    """The lines of transcript `data` from its last compact_boundary on, when the history they
    rebuild is the one every line rebuilds (history_from_lines): the boundary carries the whole
    history after it (data.messages) and nothing after it reaches back before it (a rewind to a
    prompt before it; a line written twice, replayed once: a uuid of the lines before it), and no
    line after it is torn or not JSON (the notes then name its place in the file). None: read
    every line. A session compacted many times is parsed from its last compaction: the lines
    before it are found as text (a search for the boundary, one for the uuids before it)."""
    end = len(data)
    while (at := data.rfind(_BOUNDARY, 0, end)) >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = start
        stop = data.find(b"\n", at)
        try:  # (the text may be inside another line: a tool's input that says so)
            ln = json.loads(data[start:stop if stop >= 0 else len(data)])
        except ValueError:
            continue
        if isinstance(ln, dict) and ln.get("type") == "system" and ln.get("subtype") == "compact_boundary":
            break
    else:
        return None
    d = ln.get("data")
    if not (isinstance(d, dict) and isinstance(d.get("messages"), list)):
        return None  # (a boundary that does not say the history after it: the lines before it count)
    notes: list[str] = []
    lines = _parsed(data[start:].split(b"\n"), notes)
    if notes:
        return None
    ids = {u for x in lines if isinstance(u := x.get("uuid"), str)}
    prompts = {x.get("uuid") for x in lines if x.get("type") == "user" and x.get("isPrompt")}
    if any(x.get("type") == "rewind" and x.get("toUuid") not in prompts for x in lines):
        return None
    if any(u.decode("utf-8", "replace") in ids for u in _UUID.findall(data, 0, start)):
        return None
    return lines


def _one_line(raw: bytes, last: bool, n: int, out: list[dict[str, Any]], bad: list[int], notes: list[str] | None) -> None:
    """Line `n` of a transcript, parsed on its own: kept, or said to be torn (the last), or bad."""
    try:
        obj = json.loads(raw)
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        out.append(obj)
    elif last:  # no newline after it: a write the crash cut short
        if notes is not None:
            notes.append(f"ignored a torn last line ({len(raw)} bytes; the process ended mid-write)")
    else:
        bad.append(n)


def _content(m: Any) -> list[Any]:
    c = m.get("content") if isinstance(m, dict) else None
    if isinstance(c, str):
        return [{"type": "text", "text": c}]
    return [b for b in c if isinstance(b, dict)] if isinstance(c, list) else []


def _is_result(b: dict[str, Any]) -> bool:
    return b.get("type") == "tool_result"


def repair_history(h: list[WireMessage], notes: list[str] | None = None) -> list[WireMessage]:
    """Make any message list satisfy Inv (P1-P3), changing as little as possible. Idempotent.

    - leading assistant messages are dropped (P1);
    - an assistant's tool_uses get their results, in order, as the first blocks of the next
      user message; a missing one becomes an is_error "interrupted" result (P2);
    - tool_result blocks anywhere else are dropped; a user message left empty is dropped (P3).
    """
    note = notes.append if notes is not None else (lambda _s: None)
    out: list[WireMessage] = []
    i, n = 0, len(h)
    while i < n:
        m = h[i]
        role = m.get("role") if isinstance(m, dict) else None
        i += 1
        if role == "user":
            out.extend(_user_without_results(m, note))
        elif role == "assistant" and not out:
            note("dropped an assistant message before the first user message")
        elif role == "assistant":
            m, ids = _assistant_without_results(m)
            out.append(m)
            if ids:
                nxt = h[i] if i < n else None
                answered = isinstance(nxt, dict) and nxt.get("role") == "user"
                out.append(_answers(ids, nxt if answered else None, note))
                i += answered
    return out


def _user_without_results(m: Any, note: Callable[[str], None]) -> list[WireMessage]:
    """A user message that answers no tool_use: without tool_results (said so), or none if it is left empty."""
    content = _content(m)
    kept = [b for b in content if not _is_result(b)]
    if len(kept) != len(content):
        note(f"dropped {len(content) - len(kept)} tool_result(s) with no matching tool_use")
    if not kept:
        return []
    return [m if kept == content and isinstance(m.get("content"), list) else {"role": "user", "content": kept}]


def _assistant_without_results(m: Any) -> tuple[WireMessage, list[Any]]:
    """An assistant message without tool_results (P3), and the ids of its tool_uses."""
    content = _content(m)
    if any(_is_result(b) for b in content):
        content = [b for b in content if not _is_result(b)]
        m = {**m, "content": content}
    return m, [b.get("id") for b in content if b.get("type") == "tool_use"]


def _answers(ids: list[Any], nxt: WireMessage | None, note: Callable[[str], None]) -> WireMessage:
    """The user message after tool_uses `ids`: their results first, in order (a missing one
    marked interrupted), then the rest of `nxt` (the user message that followed, if any)."""
    original = _content(nxt) if nxt is not None else []
    results: dict[Any, dict[str, Any]] = {}
    for b in original:
        if _is_result(b):
            results.setdefault(b.get("tool_use_id"), b)
    for u in ids:
        if u not in results:
            note(f"tool_use {u} had no result: marked interrupted")
    blocks = [results.get(u) or {"type": "tool_result", "tool_use_id": u, "content": INTERRUPTED_RESULT,
                                 "is_error": True} for u in ids]
    blocks += [b for b in original if not _is_result(b)]
    if nxt is not None and blocks == original:
        return nxt
    if sum(1 for b in original if _is_result(b)) > len(ids):
        note("dropped tool_result(s) with no matching tool_use")
    return {"role": "user", "content": blocks}


def history_from_lines(lines: list[dict[str, Any]], notes: list[str] | None = None) -> tuple[list[WireMessage], list[str]]:
    """Replay a transcript's lines into the conversation history, then repair it. Anything
    malformed is skipped or repaired, and said so in the returned notes (never an exception)."""
    notes = notes if notes is not None else []
    # Only the prompts a rewind goes back to need the history before them kept: a copy for every
    # prompt made resuming a session of p prompts and n messages cost O(p * n) time and memory.
    replay = _Replay(notes, {str(ln.get("toUuid")) for ln in lines if ln.get("type") == "rewind"})
    for ln in lines:
        replay.line(ln)
    if replay.repeated:
        notes.append(f"skipped {replay.repeated} repeated line(s) (a uuid seen before)")
    h = replay.h
    if _well_formed(h) and _valid(h):  # the common case (a clean end, or a crash between turns)
        return h, notes
    h = repair_history(_sanitize(h, notes), notes)
    if h and not _valid(h):  # cannot happen (repair_history's contract); never let it reach a model
        raise AssertionError("repair_history produced a history that breaks Inv")
    return h, notes


class _Replay:
    """The history a transcript's lines rebuild, line by line: its messages with their lines'
    uuids, and the history before each prompt a rewind names (`targets`: what it goes back to)."""

    def __init__(self, notes: list[str], targets: set[str]) -> None:
        self.notes = notes
        self.targets = targets
        self.h: list[WireMessage] = []
        self.ids: list[str | None] = []
        self.before_prompt: dict[str, tuple[list[WireMessage], list[str | None]]] = {}
        self.seen: set[str] = set()
        self.repeated = 0

    def line(self, ln: dict[str, Any]) -> None:
        uid = ln.get("uuid") if isinstance(ln.get("uuid"), str) else None
        if uid is not None:
            if uid in self.seen:  # a line written twice (a copy, a botched merge): replay it once
                self.repeated += 1
                return
            self.seen.add(uid)
        kind = ln.get("type")
        if kind in ("user", "assistant"):
            self._message(kind, ln, uid)
        elif kind == "result":
            self._dropped(ln.get("dropUuid"))
        elif kind == "system" and ln.get("subtype") == "compact_boundary":
            self._compacted(ln.get("data"))
        elif kind == "rewind":
            self._rewound(ln.get("toUuid"))

    def _message(self, kind: str, ln: dict[str, Any], uid: str | None) -> None:
        msg = ln.get("message")
        if not isinstance(msg, dict):
            self.notes.append(f"skipped a {kind} line without a message object")
            return
        if kind == "user" and ln.get("isPrompt") and uid in self.targets:
            self.before_prompt[uid] = (list(self.h), list(self.ids))
        if kind == "user" and ln.get("isPrompt"):
            self._joined(msg)
        if kind == "assistant":  # only the wire fields reach a model
            msg = {"role": "assistant", "content": msg.get("content", [])}
        self.h.append(msg)
        self.ids.append(uid)

    def _joined(self, prompt: dict[str, Any]) -> None:
        """A prompt that took in the local commands' records before it (a `!` command's line,
        written when it ran; assemble's first history joins them) replaces them, as the run did:
        the longest run of them that its content begins with."""
        content = wire_blocks(prompt)
        for k in range(local_command_tail(self.h), 0, -1):
            head = [b for m in self.h[-k:] for b in wire_blocks(m)]
            if content[:len(head)] == head:
                del self.h[-k:], self.ids[-k:]
                return

    def _dropped(self, drop: Any) -> None:
        """A result line that takes back the message it names (the last one)."""
        if drop is not None and self.ids and self.ids[-1] == drop:
            self.h.pop()
            self.ids.pop()

    def _compacted(self, data: Any) -> None:
        msgs = data.get("messages") if isinstance(data, dict) else None
        if isinstance(msgs, list):
            self.h = list(msgs)
            self.ids = [None] * len(self.h)
        elif not isinstance(data, dict) or "messages" in data:
            self.notes.append("ignored a compact_boundary line without a valid message list")

    def _rewound(self, to: Any) -> None:
        if isinstance(to, str) and to in self.before_prompt:
            h, ids = self.before_prompt[to]
            self.h, self.ids = list(h), list(ids)


_BLOCK_STR_FIELDS = {"text": "text", "thinking": "thinking", "redacted_thinking": "data"}


def _block_ok(b: Any) -> bool:
    """A content block a provider can send: what blocks.block_from_wire accepts, checked
    without building objects (it runs on every block of every session loaded)."""
    if not isinstance(b, dict):
        return False
    kind = b.get("type")
    if not isinstance(kind, str):
        return False
    if kind in _BLOCK_STR_FIELDS:
        return isinstance(b.get(_BLOCK_STR_FIELDS[kind]), str)
    if kind == "tool_use":
        return isinstance(b.get("id"), str) and isinstance(b.get("name"), str) and isinstance(b.get("input", {}), dict)
    if kind == "tool_result":
        c = b.get("content", "")
        return isinstance(b.get("tool_use_id"), str) and (
            c is None or isinstance(c, str) or (isinstance(c, list) and all(_block_ok(x) for x in c)))
    if kind == "image":
        return isinstance(b.get("source"), dict)
    return True


def _blank(b: dict[str, Any]) -> bool:
    """A text block with no text or only whitespace: the Messages API refuses it in any message (the
    loop never keeps one: loop/model_call.sendable; an older or hand-edited transcript may)."""
    if b.get("type") != "text":
        return False
    t = b.get("text")
    return not t or t.isspace()


def _well_formed(h: list[Any]) -> bool:
    """Every message an object with a role and well-formed blocks, no text block blank; tool_use
    ids unique."""
    tool_ids: set[str] = set()
    for m in h:
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            return False
        c = m.get("content")
        if isinstance(c, str):
            continue
        if not isinstance(c, list):
            return False
        for b in c:
            if not _block_ok(b) or _blank(b):
                return False
            if b.get("type") == "tool_use":
                if b["id"] in tool_ids or not TOOL_USE_ID.fullmatch(b["id"]):
                    return False
                tool_ids.add(b["id"])
            elif b.get("type") == "tool_result" and not TOOL_USE_ID.fullmatch(b["tool_use_id"]):
                return False
    return True


def _sanitize(h: list[Any], notes: list[str]) -> list[WireMessage]:
    """Drop what no provider accepts: non-messages, malformed or blank text blocks, and a tool_use
    whose id an earlier one already has (its results then count as stray and go too). A tool call
    id not of the Messages API's shape (ids.TOOL_USE_ID: a transcript from before the loop replaced
    such ids, loop/model_call.sendable) is replaced by a fresh one, in its results too: else every
    request of the resumed session would be refused."""
    out: list[WireMessage] = []
    tool_ids: set[str] = set()
    renamed: dict[str, str] = {}
    for m in h:
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            notes.append("dropped a history entry that is not a user or assistant message")
            continue
        c = m.get("content")
        if isinstance(c, str):
            out.append(m)
            continue
        blocks = c if isinstance(c, list) else []
        kept = []
        for b in blocks:
            if not _block_ok(b):
                kind = b.get("type") if isinstance(b, dict) else None
                notes.append(f"dropped a malformed {kind if isinstance(kind, str) else 'content'} block "
                             f"from a{'n' if m['role'] == 'assistant' else ''} {m['role']} message")
                continue
            if _blank(b):
                notes.append(f"dropped an empty text block from a{'n' if m['role'] == 'assistant' else ''} "
                             f"{m['role']} message")
                continue
            if b.get("type") == "tool_use" and not TOOL_USE_ID.fullmatch(b["id"]):
                renamed[b["id"]] = new_tool_use_id()
                notes.append(f"replaced the tool_use id {b['id'][:40]!r} (not of the API's shape) "
                             f"by {renamed[b['id']]}")
                b = {**b, "id": renamed[b["id"]]}
            elif b.get("type") == "tool_result" and b["tool_use_id"] in renamed:
                b = {**b, "tool_use_id": renamed[b["tool_use_id"]]}
            if b.get("type") == "tool_use":
                if b["id"] in tool_ids:
                    notes.append(f"dropped a repeated tool_use {b['id']} (the id was used before)")
                    continue
                tool_ids.add(b["id"])
            kept.append(b)
        if not kept:
            notes.append(f"dropped a{'n' if m['role'] == 'assistant' else ''} {m['role']} message left without content")
            continue
        if kept != blocks or not isinstance(c, list):
            m = {**m, "content": kept}
        out.append(m)
    return out


def _valid(h: list[WireMessage]) -> bool:
    """Inv for a loaded history, which may end with a closing assistant message."""
    if not h:
        return True
    if any(not _content(m) for m in h):
        return False
    try:
        check_inv(h + [{"role": "user", "content": [{"type": "text", "text": "."}]}]
                  if h[-1].get("role") == "assistant" else h)
    except InvariantViolation:
        return False
    return True


def load_transcript(path: Path, whole: bool = False) -> LoadedSession:
    """A transcript read back into the history a model may see. Past a compaction only the lines
    from the last compact_boundary on are parsed (_from_last_compaction: the same history, their
    notes; `lines` are those lines), unless `whole` (every line, to show them all)."""
    notes: list[str] = []
    with open(path, "rb") as f:
        data = f.read()
    found = None if whole else _from_last_compaction(data)
    lines = found if found is not None else _parsed(data.split(b"\n"), notes)
    del data
    history, notes = history_from_lines(lines, notes)
    sid = path.stem  # the file name, not a field inside it: a session id becomes a path again
    last = next((u for ln in reversed(lines) if isinstance(u := ln.get("uuid"), str)), None)
    return LoadedSession(sid, path, lines, history, notes, last)
