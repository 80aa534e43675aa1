"""Room: providers (on models.base). Owns the retry policy and SSE parsing; may import data types
and models.base.

Retries with capped exponential backoff, shared by the HTTP providers, and a small
SSE line decoder.

loopwright retries itself (a user's SDK client is used with max_retries=0) so every
retry is visible: before each sleep the caller sees
`SystemMessage("api_retry", {attempt, max_retries, delay_ms, error_status, error})`.

What is retried: 408, 409, 429 (honouring `retry-after-ms` / `retry-after`), every
5xx including 529 overloaded_error, connection errors, timeouts, and a stream that
breaks before its end marker (dropped connection, malformed SSE, no message_stop).
What is not: 400, 401, 403, 404, 413, 422 and other 4xx, which end the call at once
with the API's own error message.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..messages import SystemMessage
from .base import ModelError, ModelEvent, ModelResponse

# Claude Code's schedule: 0.5 s doubling, capped at 32 s, up to 25 % jitter.
# Tests shrink these through the providers' retry_base_delay / retry_max_delay.
BASE_DELAY_S = 0.5
MAX_DELAY_S = 32.0
JITTER = 0.25
# A server asking for a longer wait than this is not obeyed beyond it (the SDKs do the same).
MAX_RETRY_AFTER_S = 60.0

RETRYABLE_STATUS = frozenset({408, 409, 429})


def is_retryable_status(status: int | None) -> bool:
    return status is not None and (status in RETRYABLE_STATUS or status >= 500)


class AttemptFailed(Exception):
    """One failed attempt, as the retry loop sees it: raised inside an attempt (a broken stream,
    an error answer), or returned by a provider's `classify` for what its client raised.
    `status`: the HTTP status (None for transport and stream failures); `retry_after`: the seconds
    the server asked to wait."""

    def __init__(self, message: str, status: int | None = None, retryable: bool = True,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from `retry-after-ms` (preferred) or `retry-after` (seconds or an HTTP date)."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if not ra:
        return None
    try:
        return max(0.0, float(ra))
    except ValueError:
        pass
    try:
        import email.utils  # only for a date (~3 ms at start-up otherwise)

        when = email.utils.parsedate_to_datetime(ra)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass(slots=True)
class RetryPolicy:
    """How a failed call is retried: how often, and the exponential backoff between tries."""

    max_retries: int = 4
    base_delay: float = BASE_DELAY_S
    max_delay: float = MAX_DELAY_S
    jitter: float = JITTER

    def delay(self, attempt: int, failure: AttemptFailed) -> float:
        """Seconds to wait before retry number `attempt` (1-based)."""
        if failure.retry_after is not None:
            return min(failure.retry_after, MAX_RETRY_AFTER_S)
        import random  # (imported at the first retry: start-up)

        d: float = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return d * (1 - self.jitter * random.random())


def is_transport_error(e: BaseException) -> bool:
    """A network failure from our transport (models/wire.py), httpx/httpcore (either generation:
    a user's SDK client's) or the OS."""
    if isinstance(e, (ConnectionError, TimeoutError, asyncio.TimeoutError, EOFError)):
        return True
    wire = sys.modules.get("loopwright.models.wire")  # (loaded before any of its errors can be)
    if wire is not None and isinstance(e, wire.HTTPError):
        return True
    for cls in type(e).__mro__:
        root = cls.__module__.split(".")[0]
        if root in ("httpx", "httpx2", "httpcore", "httpcore2", "h11") and cls.__name__ != "object":
            return True
    return False


async def with_retries(
    attempt: Callable[[], AsyncGenerator[ModelEvent, None]],
    classify: Callable[[BaseException], AttemptFailed | None],
    policy: RetryPolicy,
    provider: str,
) -> AsyncIterator[ModelEvent]:
    """Run `attempt()` until it yields a ModelResponse, retrying transient failures.

    `classify` turns an exception raised by an attempt into an AttemptFailed (None: not ours,
    re-raise as is). Progress events of a failed attempt have already been passed on;
    the next attempt starts a fresh message. Only a complete response is ever yielded
    as a ModelResponse, so a broken stream never reaches the history."""
    n = 0
    while True:
        gen = attempt()
        try:
            async for ev in gen:
                yield ev
                if isinstance(ev, ModelResponse):
                    return
            failure = AttemptFailed(f"{provider} stream ended without a response")
        except AttemptFailed as e:
            failure = e
        except ModelError:
            raise
        except (asyncio.CancelledError, GeneratorExit, KeyboardInterrupt):
            raise
        except Exception as e:  # classify what the SDK or the transport raised
            f = classify(e)
            if f is None:
                raise
            failure = f
        finally:
            await gen.aclose()  # release the HTTP response of this attempt now, not at GC
        status = f"{failure.status} " if failure.status is not None else ""
        if not failure.retryable:
            raise ModelError(f"{provider} API error {status or ': '}{failure.message}".replace(" : ", ": "),
                             status=failure.status)
        if n >= policy.max_retries:
            tries = "1 attempt" if n == 0 else f"{n + 1} attempts"
            raise ModelError(
                f"{provider} API error after {tries}: {status}{failure.message}",
                status=failure.status, retryable=True,
            )
        n += 1
        delay = policy.delay(n, failure)
        yield SystemMessage("api_retry", {
            "attempt": n,
            "max_retries": policy.max_retries,
            "delay_ms": int(delay * 1000),
            "error_status": failure.status,
            "error": failure.message,
        })
        await asyncio.sleep(delay)


# --- SSE --------------------------------------------------------------------------------

@dataclass(slots=True)
class SSEEvent:
    """One server-sent event: its `event:` name (if any) and its `data:` text."""

    event: str | None
    data: str


def sse_object(data: str, event: str | None = None) -> dict[str, Any]:
    """One SSE data field as the JSON object every provider's stream sends; anything else ends
    the attempt (AttemptFailed: a broken stream is retried, never half-read into the history)."""
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):  # (RecursionError: nested deeper than the parser goes)
        where = f" in {event} event" if event else ""
        raise AttemptFailed(f"malformed SSE data{where}: {data[:80]!r}") from None
    if not isinstance(obj, dict):
        raise AttemptFailed(f"malformed SSE event: {data[:80]!r}")
    return obj


async def iter_sse(lines: AsyncIterator[str]) -> AsyncIterator[SSEEvent]:
    """Decode Server-Sent Events from text lines (the `event:` / `data:` fields we need)."""
    event: str | None = None
    data: list[str] = []
    async for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if event is not None or data:
                yield SSEEvent(event, "\n".join(data))
            event, data = None, []
            continue
        if line.startswith(":"):
            continue  # comment / keep-alive
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
        # other fields (id, retry, unknown) are ignored, as the SSE spec says
    if event is not None or data:
        yield SSEEvent(event, "\n".join(data))


async def drain(events: AsyncIterator[Any], timeout: float = 1.0) -> None:
    """Read what is left of a finished stream (its end marker) so the HTTP connection
    goes back to the pool instead of being closed; give up after `timeout` seconds."""
    async def consume() -> None:
        async for _ in events:
            pass

    try:
        await asyncio.wait_for(consume(), timeout)
    except Exception:  # a broken tail after a complete message changes nothing
        pass


def error_from_body(body: Any) -> tuple[str | None, str | None]:
    """(type, message) from an error body in the Anthropic or OpenAI shape."""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            t = err.get("type") or err.get("code")
            m = err.get("message")
            return (str(t) if t is not None else None, str(m) if m is not None else None)
        if isinstance(err, str):
            return None, err
    if isinstance(body, str) and body:
        return None, body[:500]
    return None, None
