"""Room: testing (beside the core). Owns the scripted server's error answers in each API's own
words (an HTTP status, a prompt over the context window); imports nothing of loopwright."""

from __future__ import annotations

import uuid
from typing import Any

ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
    403: "permission_error", 404: "not_found_error", 408: "timeout_error", 409: "conflict_error",
    413: "request_too_large", 429: "rate_limit_error", 500: "api_error", 502: "api_error",
    503: "api_error", 504: "timeout_error", 529: "overloaded_error",
}


WINDOW_STYLES = ("openai", "vllm", "llamacpp")


def overflow_error(kind: str, style: str, window: int, prompt: int, completion: int) -> dict[str, Any] | None:
    """The 400 body each server answers to a prompt over its window W (None: it fits). `kind`:
    messages | chat | responses; `style` says whose chat completions server this is."""
    if kind == "messages":
        if prompt <= window:
            return None
        return {"type": "error", "error": {"type": "invalid_request_error",
                                           "message": f"prompt is too long: {prompt} tokens > {window} maximum"}}
    if kind == "responses":
        if prompt <= window:
            return None
        return {"error": {"message": "Your input exceeds the context window of this model. Please adjust your input "
                                     "and try again.", "type": "invalid_request_error", "param": "input",
                          "code": "context_length_exceeded"}}
    if style == "vllm":
        if prompt + completion <= window:
            return None
        return {"object": "error", "message": f"This model's maximum context length is {window} tokens. However, you "
                f"requested {prompt + completion} tokens ({prompt} in the messages, {completion} in the completion). "
                "Please reduce the length of the messages or completion.", "type": "BadRequestError", "param": None,
                "code": 400}
    if prompt <= window:
        return None
    if style == "llamacpp":
        return {"error": {"code": 400, "message": f"request ({prompt} tokens) exceeds the available context size "
                          f"({window} tokens), try increasing it", "type": "exceed_context_size_error",
                          "n_prompt_tokens": prompt, "n_ctx": window}}
    return {"error": {"message": f"This model's maximum context length is {window} tokens. However, your messages "
                      f"resulted in {prompt} tokens. Please reduce the length of the messages.",
                      "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}


def error_body(status: int, message: str, error_type: str | None = None, openai: bool = False) -> dict[str, Any]:
    """An error answer's JSON body: the Messages API's shape, or OpenAI's (chat completions, Responses)."""
    typ = error_type or ANTHROPIC_ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    if openai:
        return {"error": {"message": message, "type": typ, "param": None, "code": typ}}
    return {"type": "error", "error": {"type": typ, "message": message}, "request_id": "req_" + uuid.uuid4().hex[:20]}
