"""A base URL where nothing listens (a local model server not started yet, a wrong port) ends the
call with a line that says so and what to check, not only the socket's words ("Connect call
failed ('127.0.0.1', 11434)")."""

from __future__ import annotations

import pytest

import loopwright as lw
from tests.helpers import held_port


@pytest.mark.parametrize("provider", ["openai", "claude"])
def test_a_refused_connection_says_no_server_is_listening(provider: str) -> None:
    model = "openai:qwen" if provider == "openai" else "claude-sonnet-5-5"
    with held_port() as port:  # nothing listens on it (nor can another worker's server, meanwhile)
        r = lw.run("hi", lw.AgentOptions(model=model, base_url=f"http://127.0.0.1:{port}/v1", api_key="k",
                                         max_retries=0))
    assert r.subtype == "error_during_execution"
    [error] = r.errors
    assert error.endswith(f"(nothing is listening there: is the server at http://127.0.0.1:{port}/v1 running, "
                          "or a proxy it goes through?)"), error


def test_a_refused_connection_does_not_show_the_base_urls_credentials() -> None:
    """A base URL may carry `user:password@` (a gateway's basic auth) or a `?key=`: the error names the
    server to check without them, as the model's repr does (both reach terminals, logs, transcripts)."""
    with held_port() as port:
        url = f"http://alice:s3cret@127.0.0.1:{port}/v1?key=k3y"
        options = lw.AgentOptions(model="openai:qwen", base_url=url, api_key="k", max_retries=0)
        r = lw.run("hi", options)
    [error] = r.errors
    assert "s3cret" not in error and "k3y" not in error and "alice" not in error, error
    assert f"is the server at http://***@127.0.0.1:{port}/v1?... running" in error, error
    from loopwright.models.openai_compat import OpenAICompatModel
    shown = repr(OpenAICompatModel("qwen", base_url=url))
    assert "s3cret" not in shown and "k3y" not in shown and f"127.0.0.1:{port}" in shown, shown
