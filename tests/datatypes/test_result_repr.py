"""A run's result says how it ended in its repr: a failed run names its error there (a newcomer's
`print(result)` without a key showed `error_during_execution 0 0 0.0` and no reason, issue 47),
and the repr stays short whatever the history holds."""

from __future__ import annotations

import pytest

import loopwright as lw
from loopwright.workflows import Node, chain


def test_a_failed_run_says_why_in_its_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # (conftest removes it too; said here for the reader)
    r = lw.run("hello", lw.AgentOptions(model="claude-sonnet-5-5"))
    assert r.subtype == "error_during_execution"
    assert "no Anthropic credentials" in repr(r) and "ANTHROPIC_API_KEY" in str(r)
    assert repr(r).startswith("ResultMessage(subtype='error_during_execution', errors=[")


def test_a_successful_run_shows_its_answer_and_not_its_history() -> None:
    big = "x" * 100_000
    model = lw.ScriptedModel([[{"type": "text", "text": "done " + big}]])
    r = lw.run(big, lw.AgentOptions(model=model))
    assert r.subtype == "success" and r.result is not None and big in r.result
    text = repr(r)
    assert text.startswith("ResultMessage(subtype='success', result='done xxx") and "model_calls=1" in text
    assert len(text) < 500  # neither the 100 kB prompt in the history nor the whole answer


def test_a_failed_workflow_says_why_in_its_repr() -> None:
    r = chain(Node("a", "Say {input}")).run("hi", model="claude-sonnet-5-5")
    assert r.is_error and r.error is not None
    assert repr(r).startswith("WorkflowResult(subtype='error_during_execution', error=")
    assert "no Anthropic credentials" in repr(r)
