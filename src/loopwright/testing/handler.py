"""Room: testing (beside the core). Owns the scripted server's HTTP handler (routing each request
to its wire, the faults played, the answer sent); may import data types, invariant, models.base
and the other testing modules below testing.server."""

from __future__ import annotations

import hashlib
import json
import select
import socket
import sys
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..invariant import InvariantViolation, check
from ..models.base import ModelError
from ..tokens import estimate_tokens
from ..usage import Usage
from .api_errors import error_body, overflow_error
from .api_rules import chat_problem, content_problem, responses_problem
from .chat_wire import chat_chunks, chat_message, openai_to_anthropic, openai_tools_to_anthropic
from .faults import Fault
from .messages_wire import message_events, message_object, play_web_search, unknown_block
from .prompt_cache import anthropic_segments, count_breakpoints, strip_cache_control
from .responses_wire import response_events, response_object, responses_to_anthropic
from .script import RecordedRequest, ScriptState
from .sse import sse


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionError, _Dropped)):
            return  # a client that went away is not a server error
        super().handle_error(request, client_address)


class LoopbackServerV6(LoopbackServer):
    address_family = socket.AF_INET6


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


class _Dropped(Exception):
    """The connection was cut on purpose (or by the client)."""


class Handler(BaseHTTPRequestHandler):
    server_obj: ScriptState
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY, as real API servers set it: otherwise Nagle holds a streamed answer's
    # last small write until the client's delayed ACK (~40 ms on Linux) on every call
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # quiet: we log our own way
        pass

    # --- plumbing --------------------------------------------------------------------

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_" + uuid.uuid4().hex[:20])
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        try:
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            raise _Dropped() from None

    def _send_raw(self, status: int, data: bytes, content_type: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        try:
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            raise _Dropped() from None

    def _peer_closed(self) -> bool:
        """True if the client hung up (e.g. it timed out while a delay fault slept)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", "req_" + uuid.uuid4().hex[:20])
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        except OSError:
            raise _Dropped() from None

    def _end_stream(self) -> None:
        try:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            raise _Dropped() from None

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _error(self, status: int, message: str, error_type: str | None = None,
               headers: dict[str, str] | None = None, openai: bool = False) -> None:
        self._send_json(status, error_body(status, message, error_type, openai), headers)

    # --- routing ---------------------------------------------------------------------

    def do_HEAD(self) -> None:
        self._simple()

    def do_GET(self) -> None:
        self._simple()

    def _simple(self) -> None:
        srv = self.server_obj
        path = self.path.split("?")[0].rstrip("/")
        kind = "models" if path in ("/v1/models", "/models") else "health" if path == "" else "other"
        if path == "/props" and srv.window is not None and srv.window_style == "llamacpp":
            kind = "props"
        rec = RecordedRequest(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, None, b"", kind)
        srv._record(rec)
        try:
            if kind == "models":
                entry: dict[str, Any] = {"id": srv.model_name, "type": "model", "object": "model",
                                         "display_name": srv.model_name}
                if srv.window is not None and srv.window_style == "vllm":
                    entry["max_model_len"] = srv.window
                self._send_json(200, {"object": "list", "data": [entry], "has_more": False})
            elif kind == "props":
                self._send_json(200, {"default_generation_settings": {"n_ctx": srv.window}, "total_slots": 1})
            elif kind == "health":
                self._send_json(200, {"ok": True})
            else:
                rec.status = 404
                self._error(404, f"no such endpoint: {self.command} {self.path}", "not_found_error")
        except _Dropped:
            rec.status = 0
        finally:
            srv._log(rec)

    def do_POST(self) -> None:
        srv = self.server_obj
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = self.path.split("?")[0].rstrip("/")
        try:
            body = json.loads(raw, parse_constant=_not_json) if raw else None
        except ValueError:  # (NaN or Infinity too: the Messages API refuses them as invalid JSON)
            body = None
        if path.endswith("/messages/count_tokens"):
            kind = "count_tokens"
        elif path.endswith("/messages"):
            kind = "messages"
        elif path.endswith("/chat/completions"):
            kind = "chat"
        elif path.endswith("/responses"):
            kind = "responses"
        else:
            kind = "other"
        rec = RecordedRequest("POST", self.path, headers, body, raw, kind, client_port=self.client_address[1])
        srv._record(rec)
        openai = kind in ("chat", "responses")  # OpenAI's error shape
        try:
            if kind == "other":
                rec.status = 404
                self._error(404, f"no such endpoint: POST {self.path}", "not_found_error", openai=openai)
            elif not isinstance(body, dict):
                rec.status = 400
                self._error(400, "request body is not a JSON object", openai=openai)
            elif kind == "count_tokens":
                segs = anthropic_segments(body)
                self._send_json(200, {"input_tokens": sum(estimate_tokens(p) for p, _ in segs) or 1})
            else:
                self._model_call(rec, body, openai)
        except _Dropped:  # the client went away mid-answer
            rec.status = 0
        finally:
            srv._log(rec)

    # --- model calls -------------------------------------------------------------------

    def _model_call(self, rec: RecordedRequest, body: dict[str, Any], openai: bool) -> None:
        srv = self.server_obj
        system, history, tools = _request_parts(rec.kind, body, openai)
        if rec.kind == "responses":
            body = {**body, "messages": history}  # (the checks below read the history there)
        problem = self._validate(body, history, openai)
        if problem is not None:
            rec.status = 400
            self._error(400, problem, openai=openai)
            return
        if srv.window is not None and self._over_window(rec, body, [system, tools, history]):
            return
        rec.loop_call = srv._classify(body)
        streaming = bool(body.get("stream"))
        if not rec.loop_call:
            content = [{"type": "text", "text": srv.side_reply}]
            self._answer(rec, body, content, "end_turn", None, openai, streaming, None)
            return
        fault = srv._take_fault(str(body.get("model") or ""))
        rec.fault = fault
        if fault is not None and self._fault_answered(rec, fault, openai):
            return
        fingerprint = hashlib.sha256(json.dumps([system, history], sort_keys=True).encode()).hexdigest()
        try:
            resp, k, explicit = srv._turn(fingerprint, system, tools, history)
        except Exception as e:  # a ModelError, an exception turn, or a failing turn function
            rec.status = (e.status or 400) if isinstance(e, ModelError) else (getattr(e, "status", None) or 500)
            what = str(e) if isinstance(e, ModelError) else f"{type(e).__name__}: {e}"
            self._error(rec.status, f"scripted server: {what}", openai=openai)
            return
        rec.turn = k
        content = [b.to_wire() for b in resp.content]
        if srv.web_search is not None and not openai:
            content, rec.searches = play_web_search(content, tools, srv.web_search)
        if not openai:  # what the Messages API answered it takes back (not what the OpenAI wires got)
            srv.served_types.update(str(b.get("type")) for b in content if isinstance(b, dict))
        if self._answer(rec, body, content, resp.stop_reason or "end_turn", explicit, openai, streaming, fault):
            srv._delivered(fingerprint)

    def _over_window(self, rec: RecordedRequest, body: dict[str, Any], segments: list[Any]) -> bool:
        """The window, as each server enforces it (before anything else): True if the request was refused."""
        srv = self.server_obj
        assert srv.window is not None
        mt = body.get("max_tokens", body.get("max_completion_tokens", body.get("max_output_tokens")))
        over = overflow_error(rec.kind, srv.window_style, srv.window, sum(estimate_tokens(x) for x in segments if x),
                              mt if isinstance(mt, int) else 0)
        if over is None:
            return False
        rec.status = 400
        self._send_json(400, over)
        return True

    def _fault_answered(self, rec: RecordedRequest, fault: Fault, openai: bool) -> bool:
        """Play the fault that comes before an answer (a delay, a raw body, an error status): True if
        the request is answered (or its client gone), False if the scripted turn is still to be served."""
        if fault.delay:
            time.sleep(fault.delay)
            if self._peer_closed():  # nobody to answer: do not spend a turn on it
                rec.status = 0
                self.close_connection = True
                return True
        if fault.raw_body is not None:
            rec.status = fault.status or 200
            self._send_raw(rec.status, fault.raw_body.encode(), fault.content_type, fault.headers)
            return True
        if fault.status:
            rec.status = fault.status
            self._error(fault.status, fault.message or f"scripted fault {fault.status}", fault.error_type,
                        fault.headers, openai)
            return True
        return False

    def _validate(self, body: dict[str, Any], history: list[Any], openai: bool) -> str | None:
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            return "messages: at least one message is required"
        if not openai and not isinstance(body.get("max_tokens"), int):
            return "max_tokens: Field required"
        if not self.server_obj.strict:
            return None
        if (bad := self._wire_problem(body, openai)) is not None:
            return bad
        # role "system" messages (newer API versions, sent by Claude Code) are outside Inv
        history = [m for m in history if not (isinstance(m, dict) and m.get("role") == "system")]
        try:
            if history and history[-1].get("role") == "assistant":
                if len(history) > 1:
                    check(history[:-1])  # an assistant prefill: what comes before it must hold
            else:
                check(history)
        except InvariantViolation as e:
            if "no tool_result" in str(e) or "should be the tool_result" in str(e) or "not followed" in str(e):
                return (f"messages: `tool_use` ids were found without `tool_result` blocks immediately after "
                        f"({e}). Each `tool_use` block must have a corresponding `tool_result` block in the next message.")
            return f"messages: {e}"
        return None

    def _wire_problem(self, body: dict[str, Any], openai: bool) -> str | None:
        """What the provider refuses before Inv: its server tools' settings, the Messages API's
        breakpoints, block types and content rules, OpenAI's pairing of calls (api_rules.py)."""
        for t in body.get("tools") or []:
            if isinstance(t, dict) and str(t.get("type", "")).startswith("web_search_"):
                if t.get("name") != "web_search":
                    return f"tools: the {t['type']} tool must be named 'web_search'"
                if t.get("allowed_domains") and t.get("blocked_domains"):
                    return "tools: cannot specify both allowed_domains and blocked_domains in the web_search tool"
        if openai:  # (a Responses request's `input`, else Chat Completions' `messages`)
            if "input" in body:
                return responses_problem(body["input"]) if isinstance(body["input"], list) else None
            return chat_problem(body["messages"])
        n = count_breakpoints(body)
        if n > 4:
            return f"A maximum of 4 blocks with cache_control may be provided. Found {n}."
        return unknown_block(body["messages"], self.server_obj.served_types) or content_problem(body["messages"])

    def _usage(self, body: dict[str, Any], openai: bool, explicit: Usage | None,
               content: list[dict[str, Any]]) -> dict[str, Any]:
        out_tokens = estimate_tokens(content) if content else 1
        if explicit is not None:
            u = explicit
            return {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
                    "cache_creation_input_tokens": u.cache_creation_input_tokens,
                    "cache_read_input_tokens": u.cache_read_input_tokens,
                    "cache_creation": {"ephemeral_5m_input_tokens": u.cache_creation_input_tokens - u.cache_creation_1h_input_tokens,
                                       "ephemeral_1h_input_tokens": u.cache_creation_1h_input_tokens}}
        if openai:
            segs: list[Any] = list(body.get("tools") or []) + list(body.get("input") or body.get("messages") or [])
            total, cached = self.server_obj.cache.auto_usage(segs)
            return {"input_tokens": total - cached, "cache_read_input_tokens": cached,
                    "cache_creation_input_tokens": 0, "output_tokens": out_tokens}
        usage = self.server_obj.cache.usage(anthropic_segments(body))
        usage["output_tokens"] = out_tokens
        return usage

    def _answer(self, rec: RecordedRequest, body: dict[str, Any], content: list[dict[str, Any]], stop: str,
                explicit: Usage | None, openai: bool, streaming: bool, fault: Fault | None) -> bool:
        """Send the response; True if it was delivered completely."""
        srv = self.server_obj
        if fault is not None and fault.no_stream:
            streaming = False  # answered whole, as if the request had not asked for a stream
        usage = self._usage(body, openai, explicit, content)
        rec.usage = dict(usage)
        if rec.searches:
            usage["server_tool_use"] = {"web_search_requests": rec.searches}
        model = str(srv.reply_model or body.get("model") or srv.model_name)
        stream_fault = fault is not None and (fault.drop_after is not None or fault.malformed_sse or fault.no_stop
                                              or fault.stream_error or fault.bad_tool_json or fault.truncated_line)
        responses = rec.kind == "responses"
        if not streaming:
            if stream_fault:  # a broken non-streaming answer: cut the connection
                rec.status = 0
                self._drop()
                return False
            obj = (response_object if responses else chat_message if openai else message_object)(
                model, content, stop, usage)
            self._send_json(200, obj)
            return True
        if responses:
            events = [sse(name, data) for name, data in response_events(
                model, content, stop, usage, fault.stream_error if fault else None, fault.message if fault else None,
                bool(fault and fault.malformed_sse), bool(fault and fault.no_stop), bool(fault and fault.bad_tool_json))]
        else:
            events = (chat_chunks(model, content, stop, usage, body, fault) if openai
                      else message_events(model, content, stop, usage, fault))
        if fault is not None and fault.unknown_event:  # after the first event, as a new API version might
            events.insert(1, sse("future_event", {"type": "future_event", "note": "not known to clients yet"}) if not openai
                          else sse(None, {"object": "future.event", "note": "not known to clients yet"}))
        if fault is not None and fault.truncated_line:  # the last JSON event cut mid-line, then a clean end
            i = max(k for k, ev in enumerate(events) if b"data: {" in ev)
            cut = events[i].index(b"data: {") + 7
            events[i:] = [events[i][:cut + (len(events[i]) - cut) // 2]]
        self._start_stream()
        for i, ev in enumerate(events):
            if fault is not None and fault.drop_after is not None and i >= fault.drop_after:
                rec.status = 0
                self._drop()
                return False
            self._chunk(ev)
        self._end_stream()
        return not stream_fault


def _request_parts(kind: str, body: dict[str, Any], openai: bool) -> tuple[str | None, list[Any], list[Any]]:
    """The request as the script reads it, whatever its wire: (system, Anthropic-shaped history, tools)."""
    if kind == "responses":
        return responses_to_anthropic(body)
    if openai:
        system, history = openai_to_anthropic(body.get("messages") or [])
        return system, history, openai_tools_to_anthropic(body.get("tools") or [])
    sys_raw = body.get("system")
    system = sys_raw if isinstance(sys_raw, str) else (
        "\n\n".join(b.get("text", "") for b in sys_raw if isinstance(b, dict)) if isinstance(sys_raw, list) else None)
    return system, strip_cache_control(body.get("messages") or []), strip_cache_control(body.get("tools") or [])
