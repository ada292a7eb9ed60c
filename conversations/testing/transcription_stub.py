"""A local stand-in for an OpenAI-compatible transcription server
(``POST /v1/audio/transcriptions``): tests and the voice-note benchmark point
``TRANSCRIPTION_BASE_URL`` at it.

It records every upload (the multipart fields, the file's name, type and
bytes, the Authorization header) and answers with what the test queued: a
transcript (``verbose_json``: text, language, duration), an HTTP error a
number of times, or either after a delay. With nothing queued it answers
``default_text``, or, when ``heard`` maps the uploaded file's SHA-256 to words,
those words."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

from conversations.testing.stub_server import LocalStubServer, StubRequestHandler

PATH = "/v1/audio/transcriptions"


@dataclass
class TranscriptionReply:
    status: int = 200
    text: str | None = None  # None: the stub's default (or what ``heard`` says)
    language: str = "english"
    duration: float | None = 2.0
    delay: float = 0.0
    body: bytes | None = None  # raw body instead of the JSON transcript


@dataclass
class TranscriptionStub:
    default_text: str = "The kitchen tap is leaking."
    delay: float = 0.0  # added to every answer (the benchmark's fixed transcription time)
    replies: list[TranscriptionReply] = field(default_factory=list)
    heard: dict[str, str] = field(default_factory=dict)  # sha256 of the upload -> its transcript
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def queue(self, *replies: TranscriptionReply) -> None:
        with self.lock:
            self.replies.extend(replies)

    def fail(self, times: int, status: int = 503) -> None:
        """The next ``times`` uploads are answered ``status``."""
        self.queue(*[TranscriptionReply(status=status) for _ in range(times)])

    def hear(self, audio: bytes, text: str) -> None:
        """Answer ``text`` whenever this exact file is uploaded."""
        with self.lock:
            self.heard[hashlib.sha256(audio).hexdigest()] = text

    def _next(self) -> TranscriptionReply:
        with self.lock:
            return self.replies.pop(0) if self.replies else TranscriptionReply()


def multipart_fields(content_type: str, body: bytes) -> dict[str, dict[str, Any]]:
    """The parts of a multipart/form-data body: name -> {filename, content_type, data}."""
    message = BytesParser(policy=HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\nMIME-Version: 1.0\r\n\r\n" + body
    )
    fields = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        fields[str(name)] = {
            "filename": part.get_filename() or "",
            "content_type": part.get_content_type(),
            "data": part.get_payload(decode=True) or b"",
        }
    return fields


class _Handler(StubRequestHandler):
    def do_POST(self):
        stub: TranscriptionStub = self.server.stub
        length = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(length)
        fields = multipart_fields(self.headers.get("Content-Type", ""), raw) if self.path == PATH else {}
        upload = fields.get("file", {})
        audio = upload.get("data", b"")
        request = {
            "path": self.path,
            "authorization": self.headers.get("Authorization", ""),
            "fields": {name: part["data"].decode(errors="replace") for name, part in fields.items() if name != "file"},
            "filename": upload.get("filename", ""),
            "file_content_type": upload.get("content_type", ""),
            "audio": audio,
            "at": time.monotonic(),
        }
        with stub.lock:
            stub.requests.append(request)
        reply = stub._next()
        time.sleep(stub.delay + reply.delay)
        if self.path != PATH:
            return self._send(404, b'{"error": {"message": "not found"}}')
        if reply.status != 200:
            return self._send(reply.status, json.dumps({"error": {"message": f"stub {reply.status}"}}).encode())
        if reply.body is not None:
            return self._send(200, reply.body)
        text = reply.text
        if text is None:
            text = stub.heard.get(hashlib.sha256(audio).hexdigest(), stub.default_text)
        answer: dict[str, Any] = {"text": text}
        if request["fields"].get("response_format") == "verbose_json":
            answer.update(task="transcribe", language=reply.language, duration=reply.duration, segments=[])
        self._send(200, json.dumps(answer).encode())

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass


class TranscriptionStubServer(LocalStubServer):
    handler = _Handler

    def __init__(self, stub: TranscriptionStub | None = None) -> None:
        super().__init__(stub or TranscriptionStub())
