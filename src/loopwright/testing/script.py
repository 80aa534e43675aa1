"""Room: testing (beside the core). Owns the scripted server's state and decisions (which requests
are loop calls, the next turn or the pending one for a retry, the faults queued, the requests
recorded); may import data types, models.base, models.scripted and the testing modules below it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..models.base import ModelRequest, ModelResponse, complete
from ..models.scripted import ScriptedModel
from ..usage import Usage
from .api_errors import WINDOW_STYLES
from .chat_wire import openai_to_anthropic
from .faults import Fault, fault_label
from .prompt_cache import PromptCache
from .responses_wire import responses_to_anthropic

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass
class RecordedRequest:
    """One HTTP request the loopback server received, kept for the test to inspect."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or None
    raw: bytes
    kind: str  # "messages" | "chat" | "count_tokens" | "models" | "health" | "other"
    loop_call: bool = False
    turn: int | None = None  # 1-based script turn served (loop calls)
    fault: Fault | None = None
    status: int = 200  # 0: the connection was cut on purpose
    received: float = field(default_factory=time.monotonic)  # arrival time (time.monotonic)
    client_port: int = 0  # the client's source port: equal ports = one kept-alive connection
    searches: int = 0  # web searches the server played in its answer (web_search=)
    # the usage the server answered with, in the Messages API's convention (input_tokens without the
    # cached ones; whatever API it spoke), so a test can hold a client's counts against the server's
    usage: dict[str, Any] | None = None


TurnsArg = Sequence[Any] | Callable[[list[dict[str, Any]]], Any] | ScriptedModel


class ScriptState:
    """What a ScriptedServer knows and decides, apart from its socket: the script, the faults
    queued, the prompt cache, the requests recorded (`ScriptedServer` says what each
    argument means: testing/server.py). Its decisions are called from the handler's threads."""

    def __init__(
        self,
        turns: TurnsArg,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = "claude-sonnet-4-6",
        min_cache_tokens: int = 1024,
        strict: bool = True,
        side_reply: str = "ok",
        is_loop_call: Callable[[dict[str, Any]], bool] | None = None,
        log: Callable[[str], None] | None = None,
        reply_model: str | None = None,
        window: int | None = None,
        window_style: str = "openai",
        web_search: Callable[[str], list[dict[str, Any]]] | None = None,
    ) -> None:
        if host not in LOOPBACK_HOSTS:
            raise ValueError(f"ScriptedServer binds only to loopback, not {host!r}")
        if isinstance(turns, ScriptedModel):
            self.model: ScriptedModel = turns
            self._turn_list: list[Any] | None = None
        elif callable(turns):
            self.model = ScriptedModel(turns)
            self._turn_list = None
        else:
            self._turn_list = list(turns)
            self.model = ScriptedModel(self._turn_list)
        self.host = host
        self.port = port
        self.model_name = model
        self.reply_model = reply_model  # the model name answers carry (a local server's file path), else the asked
        if window_style not in WINDOW_STYLES:
            raise ValueError(f"window_style must be one of {', '.join(WINDOW_STYLES)}, not {window_style!r}")
        self.window = window
        self.window_style = window_style
        self.cache = PromptCache(min_cache_tokens)
        self.strict = strict
        self.side_reply = side_reply
        self.is_loop_call = is_loop_call
        self.log = log
        self.web_search = web_search
        self.requests: list[RecordedRequest] = []
        self.faults: list[Fault] = []
        self.turns_served = 0
        self.served_types: set[str] = set()  # block types answered: a model's own blocks come back in its history
        self._seen_tools = False
        self._pending: tuple[str, ModelResponse, int, Usage | None] | None = None
        self._lock = threading.RLock()

    # --- test helpers --------------------------------------------------------------------

    def inject(self, *faults: Fault) -> None:
        """Queue faults for the next loop calls, in order."""
        with self._lock:
            self.faults.extend(faults)

    @property
    def loop_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.loop_call]

    def histories(self) -> list[list[dict[str, Any]]]:
        """The Anthropic-shaped message list of every loop call (OpenAI ones mapped back)."""
        out = []
        for r in self.loop_requests:
            if r.kind == "chat":
                out.append(openai_to_anthropic(r.body.get("messages") or [])[1])
            elif r.kind == "responses":
                out.append(responses_to_anthropic(r.body)[1])
            else:
                out.append(r.body.get("messages") or [])
        return out

    # --- decisions (called from handler threads) -----------------------------------------

    def _classify(self, body: dict[str, Any]) -> bool:
        if self.is_loop_call is not None:
            return bool(self.is_loop_call(body))
        mt = body.get("max_tokens", body.get("max_completion_tokens", body.get("max_output_tokens")))
        if isinstance(mt, int) and mt <= 1:
            return False
        with self._lock:
            if body.get("tools"):
                self._seen_tools = True
                return True
            return not self._seen_tools

    def _take_fault(self, model: str | None = None) -> Fault | None:
        """The first queued fault for this request (a fault naming a model meets only its requests)."""
        with self._lock:
            for i, f in enumerate(self.faults):
                if f.model is not None and f.model != model:
                    continue
                f.remaining -= 1
                if f.remaining <= 0:
                    self.faults.pop(i)
                return f
            return None

    def _turn(self, fingerprint: str, system: str | None, tools: list[Any],
              messages: list[dict[str, Any]]) -> tuple[ModelResponse, int, Usage | None]:
        """The response for a loop call: the pending one for a retry, else the next turn.
        Also returns the turn's own usage when the script gives one (else it is simulated)."""
        with self._lock:
            if self._pending is not None and self._pending[0] == fingerprint:
                return self._pending[1:]
            resp = asyncio.run(complete(self.model, ModelRequest(system, tools, messages)))
            k = self.model.calls
            explicit: Usage | None = None
            if self._turn_list is not None and k <= len(self._turn_list):
                spec = self._turn_list[k - 1]
                if isinstance(spec, dict) and "usage" in spec:
                    explicit = resp.usage
            self._pending = (fingerprint, resp, k, explicit)
            return resp, k, explicit

    def _delivered(self, fingerprint: str) -> None:
        with self._lock:
            if self._pending is not None and self._pending[0] == fingerprint:
                self._pending = None
                self.turns_served += 1

    def _record(self, rec: RecordedRequest) -> None:
        """Record on arrival, so `requests` is in arrival order even before the answer ends."""
        with self._lock:
            self.requests.append(rec)

    def _log(self, rec: RecordedRequest) -> None:
        if self.log is not None:
            what = f"turn {rec.turn}" if rec.turn else ("side" if rec.kind in ("messages", "chat") else rec.kind)
            stream = " stream" if isinstance(rec.body, dict) and rec.body.get("stream") else ""
            fault = f" fault={fault_label(rec.fault)}" if rec.fault else ""
            self.log(f"{rec.method} {rec.path} -> {rec.status} {what}{stream}{fault}")
