"""Room: testing (beside the core). Owns the scripted server's faults (what it does wrong on
purpose); imports nothing of loopwright."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Fault:
    """What to do wrong with the next loop call(s) (`times` of them).

    status: answer with this HTTP status and an error body in the API's shape
    (`error_type`, `message`, extra `headers` such as retry-after). Otherwise the
    scripted turn is served with: `delay` seconds before answering; `drop_after` N
    stream events then the connection is cut; `malformed_sse` (a data line that is
    not JSON); `no_stop` (the stream ends cleanly without message_stop / finish /
    [DONE]); `stream_error` (an `event: error` of that type mid-stream);
    `bad_tool_json` (the first tool call's input JSON is cut short);
    `unknown_event` (an event of a type no client knows, mid-stream); `truncated_line`
    (the stream ends cleanly in the middle of a data line); `no_stream` (a streamed
    request is answered with the whole JSON response, as some servers do); `raw_body`
    (answer with this body as `content_type`, with `status` if given, else 200)."""

    status: int | None = None
    error_type: str | None = None
    message: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop_after: int | None = None
    malformed_sse: bool = False
    no_stop: bool = False
    stream_error: str | None = None
    bad_tool_json: bool = False
    unknown_event: bool = False
    truncated_line: bool = False
    no_stream: bool = False
    raw_body: str | None = None
    content_type: str = "text/html; charset=utf-8"
    times: int = 1
    model: str | None = None  # only requests for this model (the body's "model") meet the fault

    def __post_init__(self) -> None:
        self.remaining = self.times  # `times` stays as given (a fault's label), this counts down

    @classmethod
    def overloaded(cls, times: int = 1, model: str | None = None) -> Fault:
        return cls(status=529, error_type="overloaded_error", message="Overloaded", times=times, model=model)

    @classmethod
    def rate_limited(cls, retry_after: float = 1.0, *, ms: bool = False, times: int = 1) -> Fault:
        h = {"retry-after-ms": str(int(retry_after * 1000))} if ms else {"retry-after": f"{retry_after:g}"}
        return cls(status=429, error_type="rate_limit_error",
                   message="Number of request tokens has exceeded your per-minute rate limit", headers=h, times=times)

    @classmethod
    def error(cls, status: int, message: str = "", error_type: str | None = None, times: int = 1) -> Fault:
        return cls(status=status, error_type=error_type, message=message or None, times=times)

    @classmethod
    def drop(cls, after: int = 3, times: int = 1) -> Fault:
        return cls(drop_after=after, times=times)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Fault:
        names = set(cls.__dataclass_fields__)
        unknown = set(d) - names
        if unknown:
            raise ValueError(f"unknown fault fields: {', '.join(sorted(unknown))}")
        return cls(**d)


def fault_label(f: Fault) -> str:
    if f.status:
        return str(f.status)
    for name in ("drop_after", "malformed_sse", "no_stop", "stream_error", "bad_tool_json", "unknown_event",
                 "truncated_line", "no_stream", "raw_body", "delay"):
        if getattr(f, name):
            return name
    return "fault"
