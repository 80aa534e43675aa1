"""The floor of an Agent SDK CLI in Python, for bench_sdk.py's `floor` row: just enough of the
stream-json protocol for the bench's scenarios (initialize answered; each user line one streamed
Messages request through httpcore2 on asyncio, read to its end; the init, assistant and result
lines the SDK waits for), and nothing else: no options, tools, gate, session or loop. What it
costs is Python's start, asyncio and the HTTP stack loopwright uses (httpcore2, h11, anyio) —
what loopwright's start cannot go below.

With `-p PROMPT` (bench_first_request.py's `--floor`): the same for a one-call headless run —
its flags parsed with argparse, one streamed request, the answer printed.

Not a CLI to use: bench_sdk.py runs it as `cli_path` (through a copy with this interpreter's
shebang)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import types
from urllib.parse import urlsplit

# httpcore2 without importlib.metadata (for its __version__ only), as loopwright imports it
# (models.http.import_httpcore2): a stand-in for the length of the import.
sys.modules["importlib.metadata"] = types.ModuleType("importlib.metadata")
sys.modules["importlib.metadata"].version = lambda name: "0"  # type: ignore[attr-defined]
import httpcore2  # noqa: E402

del sys.modules["importlib.metadata"]


def emit(obj: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def ask(pool: httpcore2.AsyncConnectionPool, url: str, prompt: object) -> None:
    u = urlsplit(url)
    body = json.dumps({"model": "claude-sonnet-4-6", "max_tokens": 1024, "stream": True,
                       "messages": [{"role": "user", "content": prompt}]}).encode()
    headers = {"content-type": "application/json", "x-api-key": os.environ.get("ANTHROPIC_API_KEY", ""),
               "anthropic-version": "2023-06-01"}
    async with pool.stream("POST", httpcore2.URL(scheme=u.scheme, host=u.hostname or "", port=u.port,
                                                 target="/v1/messages"), headers=headers, content=body) as r:
        async for _ in r.aiter_stream():
            pass


async def main() -> int:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    url = os.environ["ANTHROPIC_BASE_URL"]
    async with httpcore2.AsyncConnectionPool() as pool:
        while line := await reader.readline():
            msg = json.loads(line)
            if msg.get("type") == "control_request":
                emit({"type": "control_response", "response": {"subtype": "success", "request_id": msg["request_id"],
                                                               "response": {"commands": [], "pid": os.getpid()}}})
            elif msg.get("type") == "user":
                emit({"type": "system", "subtype": "init", "session_id": "floor", "uuid": "u0", "tools": [],
                      "mcp_servers": [], "model": "claude-sonnet-4-6", "permissionMode": "default", "cwd": os.getcwd(),
                      "apiKeySource": "none", "slash_commands": [], "output_style": "default"})
                await ask(pool, url, msg["message"]["content"])
                emit({"type": "assistant", "message": {"role": "assistant", "model": "claude-sonnet-4-6", "id": "msg_0",
                                                       "content": [{"type": "text", "text": "(floor)"}], "usage": {}},
                      "parent_tool_use_id": None, "session_id": "floor", "uuid": "u1"})
                emit({"type": "result", "subtype": "success", "is_error": False, "duration_ms": 0,
                      "duration_api_ms": 0, "num_turns": 0, "session_id": "floor", "total_cost_usd": 0.0,
                      "usage": {}, "result": "(floor)", "uuid": "u2"})
    return 0


async def print_mode() -> int:
    import argparse  # a CLI parses its flags: the floor pays for argparse too

    ap = argparse.ArgumentParser(prog="floor")
    ap.add_argument("-p", dest="prompt")
    args, _ = ap.parse_known_args()
    async with httpcore2.AsyncConnectionPool() as pool:
        await ask(pool, os.environ["ANTHROPIC_BASE_URL"], args.prompt)
    print("(floor)")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(print_mode() if "-p" in sys.argv else main()))
