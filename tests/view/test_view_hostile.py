"""Issue 22, class 7: a transcript from outside is hostile input for the viewer. A field of the
wrong type or an absurd number is shown with a note (never a TypeError for the whole page), and
the page's file name comes from a sanitised session id."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopwright.view.html import render
from loopwright.view.model import load_view

ODD = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(allow_nan=True),
                st.text(max_size=5), st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3),
                                                                                         st.integers(), max_size=2))


def base_lines(sid: str = "s1") -> list[dict[str, Any]]:
    return [
        {"type": "system", "subtype": "init", "sessionId": sid, "data": {"model": "claude-sonnet-4-6", "cwd": "/x"}},
        {"type": "user", "sessionId": sid, "isPrompt": True, "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "sessionId": sid, "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "assistant", "model": "claude-sonnet-4-6", "stop_reason": "tool_use",
                     "usage": {"input_tokens": 10, "output_tokens": 5},
                     "content": [{"type": "text", "text": "x"},
                                 {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}},
        {"type": "user", "sessionId": sid, "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}},
        {"type": "system", "subtype": "compact_boundary", "sessionId": sid,
         "data": {"context_window": 1000, "pre_tokens": 5, "trigger": "auto"}},
        {"type": "result", "sessionId": sid, "result": {"subtype": "success", "num_turns": 1, "total_cost_usd": 0.1,
                                                        "duration_ms": 5, "result": "done",
                                                        "permission_denials": [{"tool_use_id": "t1"}]}},
    ]


def paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += paths(v, (*prefix, i))
    return out


def put(obj: Any, path: tuple[Any, ...], value: Any) -> None:
    for k in path[:-1]:
        obj = obj[k]
    obj[path[-1]] = value


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_wrong_types_and_absurd_numbers_never_break_the_page(data: st.DataObject) -> None:
    lines = base_lines()
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(lines) - 1))
        where = data.draw(st.sampled_from(paths(lines[i])))
        put(lines[i], where, data.draw(ODD))
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "t.jsonl"
        p.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
        try:
            view = load_view(p)
        except ValueError as e:  # NotATranscript: the damage hit what says it is a transcript
            assert "not a loopwright or Claude Code transcript" in str(e)
            return
        page = render(view)
        assert page.startswith("<!") or "<html" in page[:200]


def test_absurd_numbers_are_noted_not_counted(tmp_path: Path) -> None:
    lines = base_lines()
    lines[2]["message"]["usage"] = {"input_tokens": 10**18, "output_tokens": "5", "cost_usd": -3}
    lines[5]["result"]["num_turns"] = "many"
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    view = load_view(p)
    assert view.calls[0].input_tokens == 0 and view.calls[0].output_tokens == 0
    notes = "\n".join(view.warnings)
    assert "usage.input_tokens = 1000000000000000000 is not a token count" in notes
    assert "usage.output_tokens = 5 is not a token count" in notes and "usage.cost_usd = -3 is not a cost" in notes
    assert "is not a token count" in render(view)


def test_the_page_name_comes_from_a_sanitised_session_id(tmp_path: Path, cli: Any) -> None:
    target = tmp_path / "victim"
    sid = f"../../../../../../{target}/x"  # a hostile transcript's sessionId
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in base_lines(sid)) + "\n")
    out = cli(["view", str(p)])
    assert out.code == 0, out.err
    written = Path(out.out.strip())
    assert written.parent == Path(tempfile.gettempdir()).resolve() and "/" not in written.name.removesuffix(".html")
    assert written.name.startswith("loopwright-") and ".." not in written.name
    assert not target.exists()
    written.unlink()
