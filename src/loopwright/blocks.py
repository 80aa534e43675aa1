"""Room: data types (the bottom). Owns the content blocks and wire aliases; may import nothing
of loopwright.

Content blocks and messages in the Anthropic Messages API wire format (seed §2, SPEC §1).

Every block converts to and from its exact wire JSON. Blocks the harness does not
know (server tools, citations, future types) are kept verbatim so a conversation
is never corrupted by a round trip.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

Role = Literal["user", "assistant"]
WireBlock: TypeAlias = dict[str, Any]
WireMessage: TypeAlias = dict[str, Any]


def valid_text(s: str) -> str:
    """`s` as valid Unicode: lone surrogates become U+FFFD. They come from bytes that are not UTF-8
    (a file name in a repository, argv, stdin: Python keeps such bytes as surrogates) and from a
    JSON `\\udcff` escape (a hook's output, a server's answer); no UTF-8 encoder, transcript or
    API takes them, and one kept in a history failed every later request of its session."""
    try:
        return s.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # surrogates that did not come from undecodable bytes
        return s.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def json_text(obj: Any, default: Callable[[Any], Any] | None = None) -> str:
    """`obj` as JSON text for a front end's output line (not ASCII-escaped), a lone surrogate in it
    as U+FFFD (valid_text): under Python's C/POSIX locale stdout writes one as its raw byte, and a
    line of stream-json (an SDK's) that is no UTF-8 fails the reader's decoding."""
    out = json.dumps(obj, ensure_ascii=False, default=default)
    try:
        out.encode()
    except UnicodeEncodeError:  # (only then: a line is checked once, by the C codec)
        return valid_text(out)
    return out


def utf8(s: str) -> bytes:
    """`s` (a request body, a transcript line) as UTF-8, a lone surrogate in it as U+FFFD (valid_text)."""
    try:
        return s.encode()
    except UnicodeEncodeError:  # (only then: the usual text is encoded once, as before)
        return valid_text(s).encode()


@dataclass(slots=True)
class TextBlock:
    """Text the model wrote (or the user sent); `extra` keeps fields such as citations verbatim."""

    text: str
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. citations, kept verbatim

    def to_wire(self) -> WireBlock:
        """This block in the Messages API\'s wire format (what the model is sent)."""
        return {"type": "text", "text": self.text, **self.extra}


@dataclass(slots=True)  # (not frozen: never changed nor hashed, and frozen doubles what declaring it costs every start, issue 41)
class InvalidInput:
    """A tool call's input as the model wrote it, when it is not a JSON object (`error` says why)
    or the response hit max_tokens while it was being written (`cut_off`)."""

    text: str
    error: str = ""
    cut_off: bool = False


@dataclass(slots=True)
class ToolUseBlock:
    """A tool call the model asked for: the tool's name and its JSON input, under an id its result
    must answer. `invalid`: the model wrote an input that is not a JSON object, or was cut off
    (then `input` is {} and the call is answered with an is_error result, never run)."""

    id: str
    name: str
    input: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)
    invalid: InvalidInput | None = None

    def to_wire(self) -> WireBlock:
        """This block in the Messages API\'s wire format (what the model is sent)."""
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": self.input, **self.extra}


@dataclass(slots=True)
class ToolResultBlock:
    """The answer to one tool_use (same id): text or blocks, and whether the call failed.
    `details`: the tool's structured output (tools.output.ToolOutput.details), for front ends to
    render; never sent to the model, not compared, not kept in the history."""

    tool_use_id: str
    content: str | list[Block] = ""
    is_error: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    details: Any = field(default=None, compare=False, repr=False)

    def to_wire(self) -> WireBlock:
        """This block in the Messages API\'s wire format (what the model is sent)."""
        content: Any = (
            self.content if isinstance(self.content, str) else [b.to_wire() for b in self.content]
        )
        wire: WireBlock = {"type": "tool_result", "tool_use_id": self.tool_use_id, "content": content}
        if self.is_error:
            wire["is_error"] = True
        if self.extra:
            wire.update(self.extra)
        return wire

    @property
    def text(self) -> str:
        """The result as plain text (text blocks joined), for display and hooks."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))


@dataclass(slots=True)
class ThinkingBlock:
    """The model's extended thinking, with the signature the provider checks when it is sent back."""

    thinking: str
    signature: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_wire(self) -> WireBlock:
        """This block in the Messages API\'s wire format (what the model is sent)."""
        return {"type": "thinking", "thinking": self.thinking, "signature": self.signature, **self.extra}


@dataclass(slots=True)
class RedactedThinkingBlock:
    """Thinking the provider encrypted: sent back unchanged, never shown."""

    data: str
    extra: dict[str, Any] = field(default_factory=dict)

    def to_wire(self) -> WireBlock:
        """This block in the Messages API\'s wire format (what the model is sent)."""
        return {"type": "redacted_thinking", "data": self.data, **self.extra}


@dataclass(slots=True)
class ImageBlock:
    """An image (a base64 or URL source), in a prompt or a tool result."""

    source: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)

    def to_wire(self) -> WireBlock:
        """This block in the Messages API\'s wire format (what the model is sent)."""
        return {"type": "image", "source": self.source, **self.extra}


@dataclass(slots=True)
class UnknownBlock:
    """Any block type the harness does not model; its JSON is kept and sent back unchanged."""

    data: dict[str, Any]

    @property
    def type(self) -> str:
        """The block\'s wire type (an unknown block keeps the one it came with)."""
        return str(self.data.get("type", ""))

    def to_wire(self) -> WireBlock:
        """This block in the Messages API\'s wire format (what the model is sent)."""
        return dict(self.data)


Block: TypeAlias = (
    TextBlock
    | ToolUseBlock
    | ToolResultBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | ImageBlock
    | UnknownBlock
)

_KNOWN_KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"type", "text"}),
    "tool_use": frozenset({"type", "id", "name", "input"}),
    "tool_result": frozenset({"type", "tool_use_id", "content", "is_error"}),
    "thinking": frozenset({"type", "thinking", "signature"}),
    "redacted_thinking": frozenset({"type", "data"}),
    "image": frozenset({"type", "source"}),
}


class WireFormatError(ValueError):
    """A block or message that does not have the shape the Messages API requires."""


def _extra(d: dict[str, Any], kind: str) -> dict[str, Any]:
    """The fields of a `kind` block beyond its known ones (citations, cache_control, ...), kept
    verbatim. Most blocks have none: then no walk over the block's fields (a dict comprehension,
    ~4,000 instructions, a tenth of parsing a turn's answer)."""
    known = _KNOWN_KEYS[kind]
    return {} if known.issuperset(d) else {k: v for k, v in d.items() if k not in known}


def block_from_wire(d: Any) -> Block:
    """Parse one wire block. Unknown types become UnknownBlock; known types with
    missing fields raise WireFormatError (never a KeyError deep in the loop)."""
    if not isinstance(d, dict):
        raise WireFormatError(f"content block must be an object, got {type(d).__name__}")
    kind = d.get("type")
    parse = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parse is not None:
        try:
            return parse(d)
        except KeyError as e:
            raise WireFormatError(f"{kind} block is missing field {e.args[0]!r}") from None
    if not isinstance(kind, str):
        raise WireFormatError("content block has no 'type'")
    return UnknownBlock(dict(d))


def _text(d: dict[str, Any]) -> Block:
    return TextBlock(_str(d, "text"), _extra(d, "text"))


# How deep a tool call's input may nest. A model's (or a server's) input nested hundreds of levels
# deep passed the JSON parser and then ended the run in the code that copies, freezes and records
# it (RecursionError, error_during_execution: the turn lost); no tool's schema nests this deep.
MAX_INPUT_DEPTH = 100


def too_deep(value: Any, limit: int = MAX_INPUT_DEPTH) -> str | None:
    """Why `value` (JSON data) cannot be a tool input: nested more than `limit` levels (a loop,
    never recursion: what it guards against is recursion's end), else None."""
    if isinstance(value, dict):  # most inputs are flat: looked at once (a loop, no generator: issue 41)
        for v in value.values():
            if isinstance(v, (dict, list)):
                break
        else:
            return None
    stack = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            if depth >= limit:
                return f"nested more than {limit} levels deep"
            stack.extend((x, depth + 1) for x in (v.values() if isinstance(v, dict) else v))
    return None


def _tool_use(d: dict[str, Any]) -> Block:
    inp = d.get("input", {})
    if not isinstance(inp, dict):
        raise WireFormatError("tool_use.input must be an object")
    if (deep := too_deep(inp)) is not None:  # answered as an input that is not JSON, never run nor kept
        return ToolUseBlock(_str(d, "id"), _str(d, "name"), {}, _extra(d, "tool_use"), InvalidInput("(not shown)", deep))
    return ToolUseBlock(_str(d, "id"), _str(d, "name"), inp, _extra(d, "tool_use"))


def _tool_result(d: dict[str, Any]) -> Block:
    raw = d.get("content", "")
    content: str | list[Block]
    if raw is None:
        content = ""
    elif isinstance(raw, str):
        content = raw
    elif isinstance(raw, list):
        content = [block_from_wire(b) for b in raw]
    else:
        raise WireFormatError("tool_result.content must be a string or a list of blocks")
    return ToolResultBlock(_str(d, "tool_use_id"), content, bool(d.get("is_error", False)), _extra(d, "tool_result"))


def _thinking(d: dict[str, Any]) -> Block:
    return ThinkingBlock(_str(d, "thinking"), str(d.get("signature", "")), _extra(d, "thinking"))


def _redacted_thinking(d: dict[str, Any]) -> Block:
    return RedactedThinkingBlock(_str(d, "data"), _extra(d, "redacted_thinking"))


def _image(d: dict[str, Any]) -> Block:
    src = d.get("source")
    if not isinstance(src, dict):
        raise WireFormatError("image.source must be an object")
    return ImageBlock(src, _extra(d, "image"))


_PARSERS: dict[str, Callable[[dict[str, Any]], Block]] = {
    "text": _text, "tool_use": _tool_use, "tool_result": _tool_result, "thinking": _thinking,
    "redacted_thinking": _redacted_thinking, "image": _image,
}


def _str(d: dict[str, Any], key: str) -> str:
    v = d[key]
    if not isinstance(v, str):
        raise WireFormatError(f"field {key!r} must be a string, got {type(v).__name__}")
    return v


def blocks_from_wire(content: Any) -> list[Block]:
    """Parse message content: a plain string is shorthand for one text block."""
    if isinstance(content, str):
        return [TextBlock(content)]
    if not isinstance(content, list):
        raise WireFormatError("message content must be a string or a list of blocks")
    return [block_from_wire(b) for b in content]


def blocks_to_wire(blocks: list[Block]) -> list[WireBlock]:
    return [b.to_wire() for b in blocks]


def message_to_wire(role: Role, blocks: list[Block]) -> WireMessage:
    return {"role": role, "content": [b.to_wire() for b in blocks]}


def message_from_wire(m: Any) -> tuple[Role, list[Block]]:
    if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
        raise WireFormatError("a message must be an object with role 'user' or 'assistant'")
    return m["role"], blocks_from_wire(m.get("content", []))


def wire_blocks(m: WireMessage | dict[str, Any]) -> list[dict[str, Any]]:
    """A wire message's content as its blocks: a string content is one text block; what is not a
    block (a dict) is left out."""
    content = m.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    return [b for b in blocks if isinstance(b, dict)]


def local_command_texts(command: str, stdout: str, stderr: str) -> list[str]:
    """The two texts Claude Code records for a command the user ran without the model (`!cmd`)."""
    return [f"<bash-input>{command}</bash-input>", f"<bash-stdout>{stdout}</bash-stdout><bash-stderr>{stderr}</bash-stderr>"]


def local_command_tail(h: list[WireMessage]) -> int:
    """How many user messages at the end of `h` are local commands' records (local_command_texts,
    client.record_local_command): no model has seen them yet, so the next prompt joins them in one
    user message (assemble's first history; a transcript's replay does the same)."""
    n = 0
    for m in reversed(h):
        blocks = wire_blocks(m) if isinstance(m, dict) and m.get("role") == "user" else []
        if not blocks or not all(b.get("type") == "text" and str(b.get("text", "")).startswith(_LOCAL_TAGS)
                                 for b in blocks):
            break
        n += 1
    return n


_LOCAL_TAGS = ("<bash-input>", "<bash-stdout>")


def prompt_block(content: list[dict[str, Any]]) -> int | None:
    """The index of the prompt's text in a user message's blocks: the first text block that is
    not a local command's record (a `!` run before the prompt is folded in ahead of it)."""
    return next((i for i, b in enumerate(content)
                 if b.get("type") == "text" and not str(b.get("text", "")).startswith(_LOCAL_TAGS)), None)


def text_of(blocks: list[Block]) -> str:
    return "".join(b.text for b in blocks if isinstance(b, TextBlock))


def tool_uses(blocks: list[Block]) -> list[ToolUseBlock]:
    """U(a) of the seed: the tool_use blocks in emission order."""
    return [b for b in blocks if isinstance(b, ToolUseBlock)]


# --- prompts ---------------------------------------------------------------------------------
# A run's prompt: a string, or the content of its first user message as wire blocks (text with
# images or documents: an editor's screenshot, the Agent SDK's streamed message).

Prompt: TypeAlias = str | list[WireBlock]
PROMPT_BLOCKS = frozenset({"text", "image", "document"})


# The Messages API refuses a blank text block in any message: a prompt of one, kept in the history,
# made every later request of its session fail (an SDK's or an editor's blank line, a blank text
# beside an image), so it is left out, and a prompt of nothing else is refused before it is kept.
EMPTY_PROMPT = "the prompt is empty (blank text only): write something, or attach an image or a document"


def prompt_content(prompt: Prompt) -> list[WireBlock]:
    """The first user message's content: a string as one text block; a list of text, image and
    document blocks as they are (copied), blank text blocks left out. Raises TypeError naming what
    is wrong (a prompt that is blank: EMPTY_PROMPT)."""
    if isinstance(prompt, str):
        if not prompt.strip():
            raise TypeError(EMPTY_PROMPT)
        return [{"type": "text", "text": prompt}]
    if not isinstance(prompt, list) or not prompt:
        raise TypeError(f"prompt must be a str or a non-empty list of content blocks, not {prompt!r:.80}")
    for b in prompt:
        kind = b.get("type") if isinstance(b, dict) else None
        if kind not in PROMPT_BLOCKS:
            raise TypeError(f"a prompt's blocks may be text, image or document blocks, not {kind or type(b).__name__}")
        if kind == "text" and not isinstance(b.get("text"), str):
            raise TypeError("a prompt's text block needs a \"text\" string")
        src = b.get("source") if kind != "text" else None
        if kind != "text" and not (isinstance(src, dict) and (
                (src.get("type") == "base64" and isinstance(src.get("data"), str) and src.get("media_type"))
                or (src.get("type") == "url" and isinstance(src.get("url"), str))
                or (kind == "document" and src.get("type") == "text" and isinstance(src.get("data"), str)))):
            raise TypeError(f"a prompt's {kind} block needs a source: base64 data with its media_type, or a url")
    kept = [dict(b) for b in prompt if b["type"] != "text" or b["text"].strip()]  # (blank text: left out)
    if not kept:
        raise TypeError(EMPTY_PROMPT)
    return kept


def prompt_text(prompt: Prompt) -> str:
    """The prompt's text (its text blocks joined), what hooks, mentions and commands read."""
    if isinstance(prompt, str):
        return prompt
    return "\n\n".join(b["text"] for b in prompt if isinstance(b, dict) and b.get("type") == "text")
