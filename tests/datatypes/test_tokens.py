"""One token estimate for the package (tokens.py): about 4 characters a token of the JSON text, a
string by its own text, an image block at IMAGE_TOKENS whatever its base64 size."""

from __future__ import annotations

import json

from loopwright.tokens import IMAGE_TOKENS, estimate_tokens


def image(size: int) -> dict[str, object]:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * size}}


def test_a_string_is_its_characters_over_four_and_json_is_its_compact_text() -> None:
    assert estimate_tokens("") == 0 and estimate_tokens([]) == 0
    assert estimate_tokens("a") == 1 and estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2
    msg = {"role": "user", "content": [{"type": "text", "text": "x" * 401}]}
    assert estimate_tokens(msg) == -(-len(json.dumps(msg, separators=(",", ":"))) // 4)


def test_an_image_counts_image_tokens_whatever_its_size_even_inside_a_tool_result() -> None:
    small, large = image(100), image(1_000_000)
    assert estimate_tokens(small) == estimate_tokens(large) == IMAGE_TOKENS
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [large, large]}]}
    without = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": []}]}
    assert estimate_tokens(result) - estimate_tokens(without) in range(2 * IMAGE_TOKENS, 2 * IMAGE_TOKENS + 2)


def test_text_that_quotes_an_image_block_is_counted_as_text() -> None:
    quoted = {"type": "text", "text": json.dumps(image(10_000), separators=(",", ":"))}
    assert estimate_tokens(quoted) > 10_000 // 4
