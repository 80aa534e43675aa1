"""Room: data types. Owns loopwright's one token estimate; imports nothing of loopwright.

Where no model has counted (the history appended since the last call, a compaction's before
and after, the scripted model and the loopback server's simulated usage), a token is about 4
characters of the request's JSON text, as the providers document it for English and code.
An image is the exception: its base64 text says nothing of what it costs (a 1 MB screenshot
would count 350,000 tokens), while the APIs charge a bounded amount per image, so an image
block counts IMAGE_TOKENS.
"""

from __future__ import annotations

import json
from typing import Any

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1_600  # a typical image's input tokens (the base64 length says nothing)
_IMAGE_MARK = '"type":"image"'  # (how an image block starts in the compact JSON: its text is looked at only then)


def estimate_tokens(obj: Any) -> int:
    """About 4 characters a token of `obj`'s compact JSON (a string: its own text), each image
    block IMAGE_TOKENS; 0 for an empty value, else at least 1."""
    if not obj:
        return 0
    if isinstance(obj, str):
        chars = len(obj)
    else:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        chars = len(text)
        if _IMAGE_MARK in text:
            chars += sum(IMAGE_TOKENS * CHARS_PER_TOKEN - size for size in _image_sizes(obj))
    return max(1, -(-chars // CHARS_PER_TOKEN))


def _image_sizes(obj: Any) -> list[int]:
    """The JSON length of each image block in `obj` (at any depth: a tool result's images too)."""
    if isinstance(obj, dict):
        if obj.get("type") == "image":
            return [len(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))]
        return [n for v in obj.values() for n in _image_sizes(v)]
    if isinstance(obj, list):
        return [n for v in obj for n in _image_sizes(v)]
    return []
