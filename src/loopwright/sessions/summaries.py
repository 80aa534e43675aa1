"""Room: sessions (beside execute). Owns a saved session's summary (SessionInfo: turns, calls,
tokens, cost)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .repair import _content, read_lines
from .store import SessionInfo

# --- summaries ---------------------------------------------------------------------------------

def _prompt_text(msg: Any) -> str:
    return " ".join(_text(b.get("text")) for b in _content(msg) if b.get("type") == "text").strip()


def _text(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _number(v: Any) -> float:
    """A usage figure from a line that may be corrupt: anything not a number counts 0."""
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0.0


def _live(lines: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The prompt lines still in the conversation (a rewind cuts the later ones) and how many
    messages it holds (a compaction replaces them with its summary), as history_from_lines
    replays it, without building the history."""
    prompts: list[dict[str, Any]] = []
    n = 0
    before: dict[str, tuple[int, int]] = {}  # prompt uuid -> (prompts, messages) before it
    for ln in lines:
        kind = ln.get("type")
        if kind in ("user", "assistant"):
            if kind == "user" and ln.get("isPrompt"):
                before[str(ln.get("uuid"))] = (len(prompts), n)
                prompts.append(ln)
            n += 1
        elif kind == "result" and ln.get("dropUuid") is not None:
            n -= 1
        elif kind == "system" and ln.get("subtype") == "compact_boundary":
            data = ln.get("data")
            if isinstance(data, dict) and isinstance(data.get("messages"), list):
                n = len(data["messages"])
        elif kind == "rewind" and str(ln.get("toUuid")) in before:
            k, n = before[str(ln.get("toUuid"))]
            del prompts[k:]
    return prompts, max(n, 0)


def session_info(path: Path) -> SessionInfo:
    lines = read_lines(path)
    prompts, messages = _live(lines)  # the conversation as resume loads it, after rewinds and compactions
    calls = [ln for ln in lines if ln.get("type") == "assistant"]
    inp = out = peak = 0
    cost = unsettled = 0.0
    for ln in lines:
        if ln.get("type") == "system" and ln.get("subtype") == "compact_boundary":
            data = ln.get("data")  # /compact's summarizing call is outside any run's total
            if isinstance(data, dict) and data.get("trigger") == "manual":
                cost += _number(data.get("cost_usd"))
            continue
        if ln.get("type") == "result":  # a run's own total: its subagents and compactions included
            res = ln.get("result")
            total = res.get("total_cost_usd") if isinstance(res, dict) else None
            if isinstance(total, int | float) and not isinstance(total, bool):
                cost += float(total)
                unsettled = 0.0
            continue
        if ln.get("type") != "assistant":
            continue
        msg = ln.get("message")  # lines may be corrupt: anything not a number counts 0
        u = msg.get("usage") if isinstance(msg, dict) else None
        u = u if isinstance(u, dict) else {}
        peak = max(peak, sum(int(_number(u.get(k))) for k in ("input_tokens", "cache_read_input_tokens",
                                                               "cache_creation_input_tokens")))
        inp += int(_number(u.get("input_tokens")))
        out += int(_number(u.get("output_tokens")))
        unsettled += _number(u.get("cost_usd"))  # a run cut short has no result line
    cost += unsettled
    st = path.stat()
    return SessionInfo(
        session_id=path.stem, path=path,
        cwd=next((ln["cwd"] for ln in lines if isinstance(ln.get("cwd"), str) and ln["cwd"]), ""),
        created=_text(lines[0].get("timestamp")) if lines else "",
        modified=datetime.fromtimestamp(st.st_mtime, UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        prompts=len(prompts),
        # tool-use turns: the user lines of tool results (counted even for runs that crashed)
        turns=sum(1 for ln in lines if ln.get("type") == "user" and not ln.get("isPrompt")
                  and any(b.get("type") == "tool_result" for b in _content(ln.get("message")))),
        calls=len(calls), input_tokens=inp, output_tokens=out, cost_usd=cost, peak_input_tokens=peak,
        first_prompt=_prompt_text(prompts[0].get("message")) if prompts else "",
        last_prompt=_prompt_text(prompts[-1].get("message")) if prompts else "",
        messages=messages,
    )
