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
