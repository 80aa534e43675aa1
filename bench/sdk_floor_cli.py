"""The floor of an Agent SDK CLI in Python, for bench_sdk.py's `floor` row: just enough of the
stream-json protocol for the bench's scenarios (initialize answered; each user line one streamed
Messages request over one kept-alive connection, h11 on asyncio's streams, read to its end; the
init, assistant and result lines the SDK waits for), and nothing else: no options, tools, gate,
session or loop. What it costs is Python's start, asyncio, json and h11 (the HTTP/1.1 library
under loopwright's transport, models/wire.py, which writes the requests and reads the answers) —
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
from typing import Any
from urllib.parse import urlsplit


class Connection:
    """One kept-alive HTTP/1.1 connection to the server."""

    def __init__(self, url: str) -> None:
        self.url = urlsplit(url)
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self.h11: Any = None

    async def post(self, path: str, headers: list[tuple[str, str]], body: bytes) -> None:
        """Send the request and read the answer to its end."""
        if self.streams is None:
            self.streams = await asyncio.open_connection(self.url.hostname, self.url.port)
        reader, writer = self.streams
        head = [("host", self.url.netloc), ("content-length", str(len(body))), *headers]
        import h11  # (it writes the request and reads the answer)

        conn = self.h11 = self.h11 or h11.Connection(h11.CLIENT)
        for ev in (h11.Request(method="POST", target=path, headers=head), h11.Data(data=body), h11.EndOfMessage()):
            writer.write(conn.send(ev) or b"")
        await writer.drain()
        while True:
            ev = conn.next_event()
            if ev is h11.NEED_DATA:
                conn.receive_data(await reader.read(65536))
            elif type(ev) is h11.EndOfMessage:
                conn.start_next_cycle()
                return


def emit(obj: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def ask(conn: Connection, prompt: object) -> None:
    body = json.dumps({"model": "claude-sonnet-4-6", "max_tokens": 1024, "stream": True,
                       "messages": [{"role": "user", "content": prompt}]}).encode()
    headers = [("content-type", "application/json"), ("x-api-key", os.environ.get("ANTHROPIC_API_KEY", "")),
               ("anthropic-version", "2023-06-01")]
    await conn.post("/v1/messages", headers, body)


async def main() -> int:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    conn = Connection(os.environ["ANTHROPIC_BASE_URL"])
    while line := await reader.readline():
        msg = json.loads(line)
        if msg.get("type") == "control_request":
            emit({"type": "control_response", "response": {"subtype": "success", "request_id": msg["request_id"],
                                                           "response": {"commands": [], "pid": os.getpid()}}})
        elif msg.get("type") == "user":
            emit({"type": "system", "subtype": "init", "session_id": "floor", "uuid": "u0", "tools": [],
                  "mcp_servers": [], "model": "claude-sonnet-4-6", "permissionMode": "default", "cwd": os.getcwd(),
                  "apiKeySource": "none", "slash_commands": [], "output_style": "default"})
            await ask(conn, msg["message"]["content"])
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
    await ask(Connection(os.environ["ANTHROPIC_BASE_URL"]), args.prompt)
    print("(floor)")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(print_mode() if "-p" in sys.argv else main()))
