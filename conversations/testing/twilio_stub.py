"""A local stand-in for Twilio's REST API, for tests and benchmarks.

The real ``twilio`` SDK talks HTTP to it (``TWILIO_API_BASE_URL``). It accepts
``POST .../Messages.json`` (answering with queued replies: a success, or an
HTTP error such as 429, 500 or 400 with a Twilio error code) and serves media
files registered by path, and records every request it received.

Content sends are checked as Twilio checks them: ``ContentVariables`` without
``ContentSid`` is error 92005, variables that are not a JSON object of
strings are 21656, and a ``ContentSid`` that does not start with ``HX`` is
21655; each is a 400 like Twilio's.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs

from conversations.testing.stub_server import LocalStubServer, StubRequestHandler


@dataclass
class TwilioReply:
    status: int = 201
    code: int | None = None  # Twilio's error code for a 4xx/5xx
    message: str = ""
    drop: bool = False  # take the message, then close the connection without an answer


@dataclass
class TwilioStub:
    replies: list[TwilioReply] = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)
    # path -> [(status, headers, body), ...]: answered in order, the last one from then on
    files: dict[str, list[tuple[int, dict[str, str], bytes]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Called with (form, sid) after a send is accepted and before the answer
    # goes back: a test can deliver a status callback "too early" from here.
    before_reply: Callable[[dict, str], None] | None = None

    def queue(self, *replies: TwilioReply) -> None:
        with self.lock:
            self.replies.extend(replies)

    def serve_file(self, path: str, body: bytes, content_type: str = "image/jpeg", status: int = 200, **headers):
        self.files[path] = [(status, {"Content-Type": content_type, **headers}, body)]

    def serve_file_after(self, path: str, *failures: int) -> None:
        """Answer ``path`` with these error statuses first, then as registered."""
        self.files[path] = [(status, {"Content-Type": "text/plain"}, b"not yet") for status in failures] + self.files[
            path
        ]

    @property
    def sent(self) -> list[dict]:
        """The form of every Messages.json POST, in order."""
        return [r["form"] for r in self.requests if r["method"] == "POST" and r["path"].endswith("/Messages.json")]


class _Handler(StubRequestHandler):
    def _record(self, form: dict | None = None) -> dict:
        auth = self.headers.get("Authorization", "")
        user = ""
        if auth.startswith("Basic "):
            user = base64.b64decode(auth[6:]).decode().split(":", 1)[0]
        request = {
            "method": self.command,
            "path": self.path,
            "form": form or {},
            "auth_user": user,
            "authorization": auth,
        }
        with self.server.stub.lock:
            self.server.stub.requests.append(request)
        return request

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
        self._record(form)
        stub = self.server.stub
        with stub.lock:
            reply = _content_refusal(form) or (stub.replies.pop(0) if stub.replies else TwilioReply())
        if reply.drop:
            self.close_connection = True
            return
        if reply.status >= 400:
            body = {
                "code": reply.code or reply.status,
                "message": reply.message or "stub error",
                "status": reply.status,
            }
        else:
            sid = f"SM{uuid.uuid4().hex}"
            if stub.before_reply is not None:
                stub.before_reply(form, sid)
            body = {
                "sid": sid,
                "status": "queued",
                "to": form.get("To"),
                "from": form.get("From"),
                "body": form.get("Body"),
                "messaging_service_sid": form.get("MessagingServiceSid"),
            }
        self._send(reply.status, {"Content-Type": "application/json"}, json.dumps(body).encode())

    def do_GET(self):
        self._record()
        stub = self.server.stub
        with stub.lock:
            answers = stub.files.get(self.path) or [(404, {"Content-Type": "text/plain"}, b"nf")]
            status, headers, body = answers.pop(0) if len(answers) > 1 else answers[0]
        self._send(status, headers, body)

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if "Content-Length" not in headers:  # a test may announce more than it sends (a connection broken mid-file)
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass


CONTENT_SID = re.compile(r"HX\w+")


def _content_refusal(form: dict) -> TwilioReply | None:
    """Twilio's answer to a malformed Content send, or None."""
    sid, variables = form.get("ContentSid"), form.get("ContentVariables")
    if variables is not None and not sid:
        return TwilioReply(400, 92005, "A ContentSid must be specified if content variables are provided")
    if sid is not None and not CONTENT_SID.fullmatch(sid):
        return TwilioReply(400, 21655, "The ContentSid is Invalid")
    if variables is not None:
        try:
            parsed = json.loads(variables)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict) or not all(isinstance(v, str) for v in parsed.values()):
            return TwilioReply(400, 21656, "The ContentVariables Parameter is invalid")
    return None


class TwilioStubServer(LocalStubServer):
    handler = _Handler

    def __init__(self) -> None:
        super().__init__(TwilioStub())
