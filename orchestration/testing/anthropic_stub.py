"""A local stand-in for the Anthropic Messages API, for tests.

The real ``anthropic`` SDK talks HTTP to it. Tests queue what it answers
(tool_use responses, HTTP errors such as 429 or 529, or a delay longer than the
client's timeout) and read back every request it received; ``request_images``
decodes the image blocks a request carried, to check what the model was shown.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from conversations.testing.stub_server import LocalStubServer, StubRequestHandler


def tool_use_response(
    name: str,
    tool_input: dict[str, Any],
    *,
    model: str = "claude-sonnet-4-5",
    text: str = "",
    input_tokens: int = 1200,
    output_tokens: int = 60,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content.append({"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": name, "input": tool_input})
    return _message(content, "tool_use", model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens)


def text_response(text: str, *, model: str = "claude-haiku-4-5", input_tokens: int = 300, output_tokens: int = 40):
    return _message([{"type": "text", "text": text}], "end_turn", model, input_tokens, output_tokens, 0, 0)


def _message(content, stop_reason, model, input_tokens, output_tokens, cache_read, cache_write) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex[:20]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_read_input_tokens": cache_read,
            "cache_creation_input_tokens": cache_write,
        },
    }


@dataclass(frozen=True)
class SentImage:
    """One image block of a request, decoded: what the model would have seen."""

    source_type: str  # "base64" (what we send), or "url" (what we must never send)
    media_type: str
    format: str  # what Pillow reads in the bytes ("JPEG", ...); "" if unreadable or not inline
    width: int
    height: int
    size: int  # bytes once decoded
    data: bytes


def request_images(request: dict[str, Any]) -> list[SentImage]:
    """The image blocks of every message of a recorded request, in order,
    their base64 decoded and opened with Pillow (as the API would)."""
    from PIL import Image

    found = []
    for message in request["json"].get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict) or block.get("type") != "image":
                continue
            source = block.get("source", {})
            raw, fmt, width, height = b"", "", 0, 0
            if source.get("type") == "base64":
                try:
                    raw = base64.b64decode(source.get("data", ""), validate=True)
                    with Image.open(io.BytesIO(raw)) as image:
                        fmt, (width, height) = image.format or "", image.size
                except (binascii.Error, OSError, ValueError):
                    pass
            found.append(
                SentImage(
                    source_type=source.get("type", ""),
                    media_type=source.get("media_type", ""),
                    format=fmt,
                    width=width,
                    height=height,
                    size=len(raw),
                    data=raw,
                )
            )
    return found


def request_text(request: dict[str, Any]) -> str:
    """The words of the request's first message (the turn's context)."""
    content = request["json"]["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


@dataclass
class StubReply:
    status: int = 200
    body: dict[str, Any] | None = None
    delay: float = 0.0


def error_reply(status: int, error_type: str = "api_error", message: str = "stub error") -> StubReply:
    return StubReply(status=status, body={"type": "error", "error": {"type": error_type, "message": message}})


@dataclass
class AnthropicStub:
    """Answers queued replies in order; with the queue empty, ``default`` (or a 500)."""

    replies: list[StubReply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    default: StubReply | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def queue(self, *bodies: dict[str, Any] | StubReply) -> None:
        with self.lock:
            for body in bodies:
                self.replies.append(body if isinstance(body, StubReply) else StubReply(body=body))

    def next_reply(self, request: dict[str, Any]) -> StubReply:
        with self.lock:
            self.requests.append(request)
            if self.replies:
                return self.replies.pop(0)
            return self.default or error_reply(500, message="anthropic stub: no reply queued")


class _Handler(StubRequestHandler):
    stub: AnthropicStub

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        payload = json.loads(self.rfile.read(length) or b"{}")
        request = {"path": self.path, "headers": dict(self.headers), "json": payload}
        reply = self.server.stub.next_reply(request)
        if reply.delay:
            time.sleep(reply.delay)
        body = json.dumps(reply.body or {}).encode()
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            # Let the SDK retry at once instead of backing off for seconds in tests.
            self.send_header("retry-after-ms", "1")
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out and went away

    def log_message(self, format, *args):
        pass


class AnthropicStubServer(LocalStubServer):
    handler = _Handler

    def __init__(self) -> None:
        super().__init__(AnthropicStub())
