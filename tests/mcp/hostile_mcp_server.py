"""A hostile MCP server over stdio, raw JSON-RPC (no SDK), for tests/trust/test_trust_mcp.py.

    python hostile_mcp_server.py [--junk N] [--ref URL] [--image-bytes N] [--audio-bytes N]
                                 [--blob-bytes N]

--junk N: N lines of junk on stdout and on stderr before it answers anything. --ref URL: the
tool's input schema has {"$ref": URL}. --image-bytes / --audio-bytes / --blob-bytes N: `get` returns
an image (PNG), audio, or an embedded resource blob of about N bytes. --long-line N: `get` answers
with one line of about N characters. --description-chars N: `get`'s description is N characters
longer. --schema-bytes N: a second tool, `fat`, has an input schema of about N bytes.
--blank-prompt: prompts `blank` and `some`, whose messages are blank texts (`some`: and one that is not).
--resources N: N resources, each with a 1000-character description.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--junk", type=int, default=0)
    p.add_argument("--ref")
    p.add_argument("--image-bytes", type=int, default=0)
    p.add_argument("--audio-bytes", type=int, default=0)
    p.add_argument("--blob-bytes", type=int, default=0)
    p.add_argument("--long-line", type=int, default=0)
    p.add_argument("--description-chars", type=int, default=0)
    p.add_argument("--schema-bytes", type=int, default=0)
    p.add_argument("--blank-prompt", action="store_true")
    p.add_argument("--resources", type=int, default=0)
    a = p.parse_args()
    out = sys.stdout
    for i in range(a.junk):
        out.write(f"Traceback (most recent call last): junk line {i} {{not json\n")
        sys.stderr.write(f"stderr junk {i}\n")
    out.flush()
    schema: dict = {"type": "object", "properties": {"x": {"$ref": a.ref} if a.ref else {"type": "string"}}}

    def send(msg: dict) -> None:
        out.write(json.dumps(msg) + "\n")
        out.flush()

    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        method, rid = req.get("method"), req.get("id")
        if rid is None:
            continue  # a notification
        if method == "initialize":
            caps: dict = {"tools": {}, **({"prompts": {}} if a.blank_prompt else {}),
                          **({"resources": {}} if a.resources else {})}
            result: dict = {"protocolVersion": req["params"]["protocolVersion"], "capabilities": caps,
                            "serverInfo": {"name": "hostile", "version": "1"}}
        elif method == "tools/list":
            tools = [{"name": "get", "description": "get it" + "d" * a.description_chars, "inputSchema": schema}]
            if a.schema_bytes:  # a tool whose schema alone is this big (every request would carry it)
                tools.append({"name": "fat", "description": "fat", "inputSchema": {
                    "type": "object", "properties": {"x": {"type": "string", "description": "s" * a.schema_bytes}}}})
            result = {"tools": tools}
        elif method == "resources/list":
            result = {"resources": [{"uri": f"file:///r{i}", "name": f"r{i}", "description": "d" * 1000}
                                    for i in range(a.resources)]}
        elif method == "prompts/list":
            result = {"prompts": [{"name": "blank"}, {"name": "some"}]}
        elif method == "prompts/get":  # `blank`: only blank texts; `some`: blank texts around one that is not
            texts = ["", " \n"] if req["params"]["name"] == "blank" else ["", "do it", "  "]
            result = {"messages": [{"role": "user", "content": {"type": "text", "text": t}} for t in texts]}
        elif method == "tools/call":
            content: list = [{"type": "text", "text": "here"}]
            if a.image_bytes:
                data = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * a.image_bytes).decode()
                content.append({"type": "image", "data": data, "mimeType": "image/png"})
            if a.audio_bytes:
                content.append({"type": "audio", "data": base64.b64encode(b"\0" * a.audio_bytes).decode(),
                                "mimeType": "audio/wav"})
            if a.blob_bytes:
                data = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * a.blob_bytes).decode()
                content.append({"type": "resource", "resource": {"uri": "file:///x.png", "mimeType": "image/png",
                                                                  "blob": data}})
            if a.long_line:  # one response line of about this many characters
                content = [{"type": "text", "text": "y" * a.long_line}]
            result = {"content": content}
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}})
            continue
        send({"id": rid, "jsonrpc": "2.0", "result": result})  # the id first, as most servers write it


if __name__ == "__main__":
    main()
