"""Room: testing (beside the core). Owns the loopback API server (`ScriptedServer`, the
`serve-scripted` command); may import data types, models.scripted and the other testing modules,
never options or above.

A loopback HTTP server that speaks the Anthropic Messages API and the OpenAI chat
completions API, answering from a script, recording every request, and failing on
purpose when told to.

    from loopwright.testing import ScriptedServer, Fault

    with ScriptedServer([[tool_use...], [text...]]) as srv:
        srv.inject(Fault.overloaded())            # the next model call gets a 529
        model = AnthropicModel("claude-sonnet-4-6", base_url=srv.url, api_key="test")
        ...
        srv.requests                              # every request: headers + parsed JSON

Endpoints: POST /v1/messages (stream or not), POST /v1/messages/count_tokens,
POST /v1/chat/completions (stream or not, with the usage chunk when
stream_options.include_usage), POST /v1/responses (OpenAI's Responses API, stream or not:
testing/responses_wire.py), GET /v1/models, HEAD/GET / (health), and with a `window`,
GET /props (llama.cpp's).

Which requests consume script turns (the "loop calls"). Clients such as Claude Code
also send side requests: token counts, a quota probe with max_tokens 1, title or
topic requests without tools. The rule, in order:
  1. only POST /v1/messages, /v1/chat/completions and /v1/responses can be loop calls;
  2. max_tokens <= 1 is a probe: answered with a short canned text, no turn;
  3. a request without tools, once a request with tools has been seen, is a side
     request (canned text, no turn); before any request with tools every request is
     a loop call, so tool-less conversations can be scripted too;
  4. everything else is a loop call and gets the next turn.
`is_loop_call=` replaces rules 2-4 with your own predicate of the parsed body.

Where each part lives: the state and decisions in testing/script.py, the HTTP handler in
testing/handler.py, each wire's shapes in testing/messages_wire.py, testing/chat_wire.py and
testing/responses_wire.py, the faults in testing/faults.py, the errors in testing/api_errors.py,
the prompt cache in testing/prompt_cache.py.

Server tools: with `web_search=` (a function of the query giving [{url, title}]), the server
plays the API's `web_search` tool: in a request that offers it (`web_search_20250305`), each
`server_tool_use` block of the scripted answer gets its `web_search_tool_result` (the
tool's allowed_domains / blocked_domains and max_uses applied, results with an
`encrypted_content` the client must send back verbatim), and the searches are counted in
usage.server_tool_use.web_search_requests.
A loop call whose response was not delivered completely (a fault, a dropped
connection) leaves its turn pending: the client's identical retry gets the same turn.

Usage is simulated like the real API: tokens are estimated at ~4 characters each,
and a prefix cache keyed on the request prefix (tools, system, messages) up to each
`cache_control` breakpoint reports cache_read_input_tokens / cache_creation_input_tokens
(20-block lookback, minimum cacheable prefix `min_cache_tokens`, 5 min or 1 h TTL).
The OpenAI endpoint caches every prefix automatically and reports
prompt_tokens_details.cached_tokens.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Sequence
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .faults import Fault
from .handler import Handler, LoopbackServer, LoopbackServerV6
from .script import LOOPBACK_HOSTS, ScriptState


class ScriptedServer(ScriptState):
    """`ScriptedServer(turns, *, host="127.0.0.1", port=0, model="claude-sonnet-4-6",
    min_cache_tokens=1024, strict=True, side_reply="ok", is_loop_call=None, log=None)`.

    `turns`: a list of ScriptedModel turns (wire blocks, or {content, stop_reason?,
    usage?, delay?}, or an exception instance answered as an API error), a function of
    the Anthropic-shaped history, or a ScriptedModel. `strict` answers 400 like the
    real API to a history that breaks Inv or has more than 4 cache breakpoints. `log`
    is called with one line per request. `reply_model`: the model name every answer carries
    (as llama-server answers with its model file's path), instead of the one asked for.
    `window`: the context window W, enforced as the real servers do: a request whose prompt
    (estimated) is over W gets a 400 in that API's own words; on /v1/chat/completions in the
    words of `window_style` ("openai", "vllm": prompt + max_tokens > W, "llamacpp"); `/props`
    (llamacpp) and `/v1/models` (vllm: max_model_len) then tell W, as those servers do."""

    _httpd: ThreadingHTTPServer | None = None  # (while it serves)
    _thread: threading.Thread | None = None

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> ScriptedServer:
        handler = type("Handler", (Handler,), {"server_obj": self})
        cls = LoopbackServerV6 if ":" in self.host else LoopbackServer
        self._httpd = cls((self.host, self.port), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="scripted-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def openai_url(self) -> str:
        """Base URL for OpenAI-compatible clients (they append /chat/completions)."""
        return self.url + "/v1"


def load_script_file(path: str | Path) -> tuple[list[Any], list[Fault]]:
    """SCRIPT.json: a list of turns, or {"turns": [...], "faults": [...]}."""
    data = json.loads(Path(path).read_text())
    faults: list[Fault] = []
    if isinstance(data, dict):
        faults = [Fault.from_json(f) for f in data.get("faults") or []]
        data = data.get("turns")
    if not isinstance(data, list):
        raise ValueError('the script must be a list of turns or {"turns": [...]}')
    from ..models.scripted import check_script

    try:
        check_script(data)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    return data, faults


SCRIPT_FORMAT = """\
The script: each model call takes the next turn. A turn is a list of content blocks in the
Anthropic Messages format, or {"content": [...], "stop_reason": ..., "usage": {...}, "delay": S}:

  {"turns": [
    [{"type": "text", "text": "Let me look."},
     {"type": "tool_use", "id": "call_1", "name": "Glob", "input": {"pattern": "*"}}],
    {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"}
  ]}

The same file runs without a server: loopwright -p PROMPT --model scripted:FILE.json.
An example ships in examples/scripted-turns.json; the format: docs/models.md
("A scripted model")."""


def serve_main(argv: Sequence[str], parser: type[argparse.ArgumentParser] = argparse.ArgumentParser) -> int:
    """`loopwright serve-scripted SCRIPT.json [--port N] [--host 127.0.0.1]`: serve in the foreground.
    `parser`: the command line's parser class (the CLI passes its own, whose errors are one line)."""
    p = parser(
        prog="loopwright serve-scripted", formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=SCRIPT_FORMAT,
        description="Serve a scripted model over the Anthropic Messages API and the OpenAI chat completions API "
                    "on loopback. Point a client at it, e.g. ANTHROPIC_BASE_URL=<url> claude -p ... ; "
                    "OpenAI clients use <url>/v1. Requests with max_tokens<=1, and requests without tools once "
                    "a request with tools was seen, are side requests answered without using a turn.",
    )
    p.add_argument("script", help="JSON file: a list of turns, or {\"turns\": [...], \"faults\": [...]} (below)")
    p.add_argument("--port", type=int, default=0, help="port (default: any free port)")
    p.add_argument("--host", default="127.0.0.1", choices=LOOPBACK_HOSTS)
    p.add_argument("--model", default="claude-sonnet-4-6", help="model name reported in responses")
    p.add_argument("--min-cache-tokens", type=int, default=1024)
    p.add_argument("--no-strict", action="store_true", help="do not reject histories that break Inv")
    p.add_argument("--loop-model", metavar="SUBSTRING",
                   help="only requests whose model contains SUBSTRING (and max_tokens > 1) use turns; "
                        "e.g. 'sonnet' when a client sends side requests to a small model")
    p.add_argument("--quiet", action="store_true", help="do not print each request")
    args = p.parse_args(list(argv))
    try:
        turns, faults = load_script_file(args.script)
    except (OSError, ValueError) as e:
        print(f"loopwright serve-scripted: {e}", file=sys.stderr)
        return 2

    def log(line: str) -> None:
        print(line, flush=True)

    loop_model: str | None = args.loop_model

    def by_model(body: dict[str, Any]) -> bool:
        mt = body.get("max_tokens", body.get("max_completion_tokens"))
        return loop_model is not None and loop_model in str(body.get("model", "")) and not (
            isinstance(mt, int) and mt <= 1)

    srv = ScriptedServer(turns, host=args.host, port=args.port, model=args.model,
                         min_cache_tokens=args.min_cache_tokens, strict=not args.no_strict,
                         is_loop_call=by_model if loop_model else None, log=None if args.quiet else log)
    try:
        srv.start()
    except OSError as e:
        print(f"loopwright serve-scripted: cannot listen on {args.host}:{args.port}: {e}", file=sys.stderr)
        return 1
    srv.inject(*faults)
    print(f"loopwright scripted server listening on {srv.url} ({len(turns)} turns)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("stopped", flush=True)
    finally:
        srv.stop()
    return 0
