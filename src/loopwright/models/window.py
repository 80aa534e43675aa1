"""Room: providers (on models.base). Owns context windows learned from servers; may import data
types, models.base and models.catalog.

A model's context window W, when nobody told us:

- `parse_overflow(text)`: a server's "the prompt is too long" error, in each server's own words,
  as (W, N) where the text gives them:
    Anthropic   `prompt is too long: 208310 tokens > 200000 maximum`
    OpenAI      `This model's maximum context length is 128000 tokens. However, your messages
                resulted in 130000 tokens` (code `context_length_exceeded`; the Responses API:
                `Your input exceeds the context window of this model`, no numbers)
    vLLM        `This model's maximum context length is 2048 tokens. However, you requested 2100
                tokens (...)`, `... and your request has 1900 input tokens`, `The decoder prompt
                (length 3000) is longer than the maximum model length of 2048`
    llama.cpp   `request (2100 tokens) exceeds the available context size (2048 tokens), try
                increasing it` (type `exceed_context_size_error`)
    LM Studio   `... the model is loaded with context length of only 4096 tokens ...`
- `remember` / `known`: windows learned (from an error or by `discover`), per base URL and model,
  for the life of the process.
- `discover(model)`: ask an OpenAI-compatible server before the first call, in this order:
  llama.cpp `/props` n_ctx, vLLM `/v1/models` max_model_len (or llama.cpp's meta.n_ctx), Ollama
  `/api/show` num_ctx, LM Studio `/api/v0/models/<id>` loaded_context_length). Each probe is
  one short GET or POST; a server that answers none of them is left alone (None).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# Ollama's default num_ctx when a model sets none: it truncates silently beyond it, so W is that,
# not the model's trained context length.
OLLAMA_DEFAULT_NUM_CTX = 4_096


@dataclass(frozen=True, slots=True)
class Overflow:
    """A context-window error: W and the request's N when the server said them."""

    window: int | None
    prompt_tokens: int | None


_N = r"([\d,]+)"
# (pattern, group of W, group of N), case-insensitive: the first that matches wins. Strings, compiled
# by re (and kept in its cache) at the first error message read, not at every start.
_PATTERNS: list[tuple[str, int | None, int | None]] = [
    (rf"prompt is too long: {_N} tokens > {_N} maximum", 2, 1),  # Anthropic
    (rf"request \({_N} tokens\) exceeds the available context size \({_N} tokens\)", 2, 1),
    (rf"maximum context length is {_N} tokens\. However, you requested [\d,]+ tokens \({_N} in the "
     r"messages", 1, 2),  # vLLM: N is the messages' part (the rest is max_tokens)
    (rf"maximum context length is {_N} tokens\. However, (?:your messages resulted in|you "
     rf"requested) {_N} tokens", 1, 2),  # OpenAI, vLLM
    (rf"maximum context length is {_N} tokens and your request has {_N} input tokens", 1, 2),
    (rf"prompt \(length {_N}\) is longer than the maximum model length of {_N}", 2, 1),  # vLLM
    (rf"loaded with context length of only {_N} tokens", 1, None),  # LM Studio
    (rf"maximum context length is {_N} tokens", 1, None),
    (r"context_length_exceeded|exceed_context_size_error|exceeds the context window|"
     r"exceeds the available context size|prompt is too long|context window exceeded", None, None),
]


def _int(m: re.Match[str], group: int | None) -> int | None:
    return int(m.group(group).replace(",", "")) if group is not None else None


def parse_overflow(text: str) -> Overflow | None:
    """The window and prompt size of a context-window error message, None if it is no such error."""
    for pattern, w, n in _PATTERNS:
        m = re.search(pattern, text, re.I)
        if m:
            return Overflow(_int(m, w), _int(m, n))
    return None


# --- what was learned -------------------------------------------------------------------------

_KNOWN: dict[tuple[str, str], int] = {}


def key_of(model: Any) -> tuple[str, str]:
    """(base URL, model name): where a window is remembered."""
    base = getattr(model, "base_url", None) or getattr(model, "default_base_url", None) or ""
    return str(base).rstrip("/"), str(getattr(model, "name", ""))


def remember(model: Any, window: int) -> None:
    _KNOWN[key_of(model)] = window


def known(model: Any) -> int | None:
    return _KNOWN.get(key_of(model))


def forget_all() -> None:
    """Forget every learned window (tests)."""
    _KNOWN.clear()


# --- discovery ---------------------------------------------------------------------------------

def _positive(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def from_models_list(body: Any, name: str) -> int | None:
    """vLLM's max_model_len or llama.cpp's meta.n_ctx for `name` in a /v1/models answer (the only
    model listed when none has that id: a local server serves one model under any name)."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    entries = [d for d in data if isinstance(d, dict)]
    mine = [d for d in entries if d.get("id") == name] or (entries if len(entries) == 1 else [])
    for d in mine:
        meta = d.get("meta")
        w = _positive(d.get("max_model_len")) or (_positive(meta.get("n_ctx")) if isinstance(meta, dict) else None)
        if w:
            return w
    return None


def from_props(body: Any) -> int | None:
    """llama.cpp's GET /props: default_generation_settings.n_ctx (the context of one slot)."""
    if not isinstance(body, dict):
        return None
    settings = body.get("default_generation_settings")
    return _positive(settings.get("n_ctx")) if isinstance(settings, dict) else _positive(body.get("n_ctx"))


def from_ollama_show(body: Any) -> int | None:
    """Ollama's POST /api/show: num_ctx from the parameters, else Ollama's default (capped by the
    model's trained context length in model_info)."""
    if not isinstance(body, dict):
        return None
    params = body.get("parameters")
    if isinstance(params, str):
        m = re.search(r"^\s*num_ctx\s+(\d+)", params, re.M)
        if m:
            return int(m.group(1))
    info = body.get("model_info")
    trained = next((_positive(v) for k, v in info.items() if k.endswith(".context_length")), None) if isinstance(
        info, dict) else None
    if trained is None and "model_info" not in body:
        return None
    return min(OLLAMA_DEFAULT_NUM_CTX, trained or OLLAMA_DEFAULT_NUM_CTX)


def from_lmstudio(body: Any) -> int | None:
    """LM Studio's GET /api/v0/models/<id>: the loaded context length, else the model's maximum."""
    if not isinstance(body, dict):
        return None
    return _positive(body.get("loaded_context_length")) or _positive(body.get("max_context_length"))


async def discover(model: Any) -> int | None:
    """The window of an OpenAI-compatible server's model, asked before the first call; cached with
    the learned ones. None: no probe answered (the catalog or the first error will tell)."""
    cached = known(model)
    if cached is not None:
        return cached
    get = getattr(model, "probe", None)
    base = getattr(model, "base_url", None)
    if get is None or not base:
        return None
    base = str(base).rstrip("/")
    root = base[:-3] if base.endswith("/v1") else base
    name = str(model.name)
    from urllib.parse import quote

    probes: list[tuple[str, str, dict[str, Any] | None, Any]] = [
        ("GET", f"{root}/props", None, from_props),
        ("GET", f"{base}/models", None, lambda b: from_models_list(b, name)),
        ("POST", f"{root}/api/show", {"model": name}, from_ollama_show),
        ("GET", f"{root}/api/v0/models/{quote(name, safe='')}", None, from_lmstudio),
    ]
    for method, url, body, read in probes:
        answer = await get(method, url, body)
        window = read(answer) if answer is not None else None
        if window:
            remember(model, window)
            return int(window)
    return None


def too_small(window: int, system: str | None, tools: list[dict[str, Any]], history: list[Any], ratio: float,
              prompt_tokens: int | None) -> str:
    """The error when even the minimum (system prompt, tools, the first message) cannot fit W: what
    takes how much (estimated tokens, scaled by the server's own count), and what to shrink."""
    import json

    sys_t = int(len(system or "") / 4 * ratio)
    tools_t = int(len(json.dumps(tools)) / 4 * ratio)
    first = history[0] if history else {}
    first_t = int(len(json.dumps(first)) / 4 * ratio)
    said = f" (the server counted {prompt_tokens})" if prompt_tokens else ""
    return (f"the request does not fit the model's context window of {window} tokens{said}, and nothing is left "
            f"to compact: the system prompt takes about {sys_t} tokens, the {len(tools)} tool definitions about "
            f"{tools_t}, the first message about {first_t}. Shrink what is largest: a shorter system prompt "
            "(--system-prompt), fewer tools (--disallowedTools, fewer MCP servers), a shorter prompt, or "
            "serve the model with a larger context (llama-server -c N, vLLM --max-model-len N, Ollama num_ctx)")
