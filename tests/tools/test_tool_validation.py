"""Tool input validation: fastjsonschema recognises a valid input (compiled once per tool),
jsonschema is loaded only to say what is wrong with an invalid one."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

import loopwright as lw

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer", "default": 5}, "s": {"type": "string"}},
          "required": ["s"], "additionalProperties": False}


@pytest.mark.e2e
def test_a_valid_input_does_not_load_jsonschema() -> None:
    code = ("import sys, loopwright as lw\n"
            f"t = lw.Tool('t', 'd', {SCHEMA!r}, lambda x: 'ok')\n"
            "assert t.validate({'s': 'x', 'n': 1}) is None\n"
            "print('jsonschema' in sys.modules, 'fastjsonschema' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


def test_an_invalid_input_gets_jsonschemas_messages() -> None:
    t = lw.Tool("t", "d", SCHEMA, lambda x: "ok")
    msg = t.validate({"n": "one"})
    assert msg is not None and msg.startswith("Invalid input for tool t: ")
    assert "n: 'one' is not of type 'integer'" in msg and "'s' is a required property" in msg
    assert t.validate({"s": "x", "extra": 1}) is not None


def test_validation_fills_in_no_defaults() -> None:
    t = lw.Tool("t", "d", SCHEMA, lambda x: "ok")
    data: dict[str, Any] = {"s": "x"}
    assert t.validate(data) is None and data == {"s": "x"}


def test_schemas_fastjsonschema_does_not_take_fall_back_to_jsonschema() -> None:
    newer = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
             "properties": {"xs": {"type": "array", "prefixItems": [{"type": "integer"}]}}}
    t = lw.Tool("t", "d", newer, lambda x: "ok")
    assert t.validate({"xs": [1, "a"]}) is None
    msg = t.validate({"xs": ["a"]})
    assert msg is not None and "'a' is not of type 'integer'" in msg  # 2020-12's prefixItems, by jsonschema
