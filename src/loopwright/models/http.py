"""Room: providers (on models.base). Owns what the HTTP providers share; may import data types,
models.base and models.retry.

What the two HTTP providers share: one SDK client per event loop, the retry policy, and
mapping the SDKs' exceptions to retry decisions. Both official SDKs (anthropic, openai)
have the same error classes (APIStatusError, APIConnectionError), so one mapping serves."""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, ClassVar

from .base import ModelError, ModelEvent, ModelRequest
from .retry import (
    Failure,
    RetryPolicy,
    error_from_body,
    is_retryable_status,
    is_transport_error,
    parse_retry_after,
    with_retries,
)


class SDKModel:
    """Base of AnthropicModel and OpenAICompatModel. Subclasses set the class attributes,
    `build_params(request)` and `_attempt(params)` (one streamed call)."""

    provider: ClassVar[str]  # for messages: "Anthropic", "OpenAI-compatible"
    sdk: ClassVar[str]  # the module imported on first use: "anthropic", "openai"
    client_class: ClassVar[str]  # "AsyncAnthropic", "AsyncOpenAI"
    base_error: ClassVar[str]  # the SDK's root exception: "AnthropicError", "OpenAIError"
    install_hint: ClassVar[str]

    def __init__(self, model: str, base_url: str | None, api_key: str | None, max_retries: int,
                 include_partial_messages: bool, retry_base_delay: float | None,
                 retry_max_delay: float | None, timeout: float) -> None:
        self.name = model
        self.base_url = base_url
        self.api_key = api_key
        self.include_partial_messages = include_partial_messages
        self.timeout = timeout
        self.retry = RetryPolicy(max_retries)
        if retry_base_delay is not None:
            self.retry.base_delay = retry_base_delay
        if retry_max_delay is not None:
            self.retry.max_delay = retry_max_delay
        self._client_obj: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, base_url={self.base_url!r})"

    def _client(self) -> Any:
        """One SDK client per event loop (httpx connection pools are bound to their loop).
        The SDK's own retries are off: loopwright retries, visibly (api_retry events)."""
        loop = asyncio.get_running_loop()
        if self._client_obj is None or self._client_loop is not loop:
            try:
                module = importlib.import_module(self.sdk)
            except ImportError:
                raise ModelError(f"the {self.sdk} SDK is not installed: {self.install_hint}") from None
            kwargs: dict[str, Any] = {"max_retries": 0, "timeout": self.timeout}
            if self.base_url:
                kwargs["base_url"] = self.base_url
            if self.api_key:
                kwargs["api_key"] = self.api_key
            try:
                self._client_obj = getattr(module, self.client_class)(**kwargs)
            except getattr(module, self.base_error) as e:
                raise ModelError(f"cannot create the {self.provider} client: {e}") from None
            self._client_loop = loop
        return self._client_obj

    async def aclose(self) -> None:
        """Close this loop's SDK client (its connection pool). Left to the garbage collector,
        a client of a finished asyncio.run() is closed on the next run's loop, which fails
        ("Task exception was never retrieved ... Event loop is closed") and leaks sockets."""
        client, self._client_obj = self._client_obj, None
        if client is not None and self._client_loop is asyncio.get_running_loop():
            await client.close()

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _attempt(self, params: dict[str, Any]) -> AsyncGenerator[ModelEvent, None]:
        raise NotImplementedError

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        params = self.build_params(request)
        return with_retries(lambda: self._attempt(params), self._classify, self.retry, self.provider)

    def _classify(self, e: BaseException) -> Failure | None:
        """An exception of one attempt as a Failure (retryable or not), or None: not ours."""
        sdk = sys.modules.get(self.sdk)
        if sdk is not None and isinstance(e, sdk.APIStatusError):
            status = int(e.status_code)
            typ, msg = error_from_body(e.body)
            headers = e.response.headers
            retryable = is_retryable_status(status)
            should = (headers.get("x-should-retry") or "").lower()
            if should in ("true", "false"):
                retryable = should == "true"
            text = f"{typ}: {msg}" if typ and msg else (msg or typ or str(e))
            return Failure(text, status, retryable, parse_retry_after(headers))
        if sdk is not None and isinstance(e, sdk.APIConnectionError):
            cause = e.__cause__ or e.__context__
            detail = f" ({type(cause).__name__}: {cause})" if cause else ""
            return Failure(f"{e.message}{detail}")
        if is_transport_error(e):
            return Failure(f"connection error: {type(e).__name__}: {e}")
        if sdk is not None and isinstance(e, getattr(sdk, self.base_error)):
            return Failure(f"{type(e).__name__}: {e}", retryable=False)
        return None
