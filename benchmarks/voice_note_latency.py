"""A voice note's way through the real stack: from the webhook to the reply
handed to Twilio, with the transcriber taking a fixed time.

gunicorn, the ``emergency`` worker, a ``transcription`` worker (as in
docker/compose.yaml) and a worker for the other queues (the download, the turn
with the scripted model, the send), Redis and a throwaway embedded PostgreSQL; the real twilio SDK sends to
a local stub that also serves the audio, and the http transcriber posts to the
local transcription stub, which answers after ``--transcription-delay``
seconds. The audio is real: espeak-ng speaks it and ffmpeg encodes it to
OGG/Opus, as WhatsApp sends voice notes.

Prints, from receipt (``Message.created_at``): transcript done, and the reply
handed to Twilio (``sent_at``), p50/p95/max, with the delay and the coalescing
wait that are part of it. No thresholds.

    .venv/bin/python benchmarks/voice_note_latency.py [--notes 20] [--rate 1] [--transcription-delay 2.0]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _stack import (
    ORG_NUMBER,
    ROOT,
    SignedPoster,
    children_start,
    children_stop,
    configure,
    gunicorn_command,
    organization_with_tenants,
    percentile,
    teardown,
    worker_command,
)

SPOKEN = "Hello, the kitchen tap has been leaking since Monday and the cupboard under it is wet."


def spoken_ogg() -> bytes:
    missing = [name for name in ("espeak-ng", "ffmpeg") if shutil.which(name) is None]
    if missing:
        raise SystemExit(f"{' and '.join(missing)} not installed: run scripts/install-system-deps")
    folder = Path(tempfile.mkdtemp(prefix="voice-bench-"))
    try:
        wav, ogg = str(folder / "a.wav"), str(folder / "a.ogg")
        subprocess.run(["espeak-ng", "-w", wav, SPOKEN], check=True, capture_output=True)
        encode = ["ffmpeg", "-y", "-loglevel", "error", "-i", wav, "-c:a", "libopus", "-b:a", "24k", ogg]
        subprocess.run(encode, check=True, capture_output=True)
        return (folder / "a.ogg").read_bytes()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def workers_ready(count: int, timeout: float = 120) -> None:
    """Wait until ``count`` Celery workers answer a ping."""
    from config.celery import app

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(app.control.ping(timeout=1.0) or []) >= count:
            return
    raise SystemExit(f"fewer than {count} workers answered within {timeout:.0f} s")


def summary(name: str, values: list[float]) -> str:
    if not values:
        return f"{name}: none"
    return (
        f"{name} (n={len(values)}): p50 {percentile(values, 50):.0f}  p95 {percentile(values, 95):.0f}  "
        f"max {max(values):.0f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=20, help="voice notes, one per tenant")
    parser.add_argument("--rate", type=float, default=1.0, help="voice notes per second")
    parser.add_argument("--transcription-delay", type=float, default=2.0, help="seconds the transcriber takes")
    parser.add_argument(
        "--coalesce", type=float, default=None, help="INBOUND_COALESCE_SECONDS (default: the product's)"
    )
    parser.add_argument("--model-delay-ms", type=int, default=800)
    parser.add_argument("--port", type=int, default=8771)
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    from conversations.testing.transcription_stub import TranscriptionStub, TranscriptionStubServer
    from conversations.testing.twilio_stub import TwilioStubServer

    audio = spoken_ogg()
    stub = TranscriptionStub(default_text=SPOKEN, delay=args.transcription_delay)
    with TwilioStubServer() as twilio, TranscriptionStubServer(stub) as transcriber:
        return run(args, twilio, transcriber, audio)


def run(args, twilio, transcriber, audio: bytes) -> int:
    env = {
        "WHATSAPP_SENDER": "twilio",
        "TWILIO_API_BASE_URL": twilio.url,
        "TWILIO_ACCOUNT_SID": "AC" + "0" * 32,
        "SCRIPTED_MODEL_DELAY_MS": str(args.model_delay_ms),
        "TRANSCRIPTION_BACKEND": "http",
        "TRANSCRIPTION_BASE_URL": transcriber.url,
        "EMERGENCY_CLASSIFIER": "off",  # not measured here; keeps the two cores for the path that is
    }
    if args.coalesce is not None:
        env["INBOUND_COALESCE_SECONDS"] = str(args.coalesce)
    data_dir = configure(args.port, **env)
    children = {}
    try:
        from django.conf import settings

        from config.celery import QUEUES
        from conversations.models import Media, Message

        phones = organization_with_tenants(args.notes)
        children = children_start(
            args.port,
            {
                "web": gunicorn_command(args.port, 2),
                "worker-emergency": worker_command(1, ["emergency"], "emergency"),
                # As in docker/compose.yaml: transcriptions (seconds each) never hold a thread the
                # downloads, turns and sends need.
                "worker-transcription": worker_command(4, ["transcription"], "transcription"),
                "worker": worker_command(8, [q for q in QUEUES if q not in {"emergency", "transcription"}], "worker"),
            },
        )
        workers_ready(len(children) - 1)  # gunicorn answers first; a note must not wait for a worker to boot
        poster = SignedPoster(args.port)
        started = time.monotonic()

        def send(i: int) -> None:
            path = f"/2010-04-01/Accounts/AC{'0' * 32}/Messages/MM{uuid.uuid4().hex}/Media/ME{uuid.uuid4().hex}"
            twilio.stub.serve_file(path, audio, content_type="audio/ogg")
            time.sleep(max(0.0, started + i / args.rate - time.monotonic()))
            poster.post(
                {
                    "MessageSid": f"SM{uuid.uuid4().hex}",
                    "AccountSid": "AC" + "0" * 32,
                    "From": f"whatsapp:{phones[i]}",
                    "To": f"whatsapp:{ORG_NUMBER}",
                    "Body": "",
                    "NumMedia": "1",
                    "MediaUrl0": "https://api.twilio.com" + path,
                    "MediaContentType0": "audio/ogg",
                    "MessageType": "audio",
                }
            )

        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(send, range(args.notes)))
        deadline = time.monotonic() + args.timeout
        while Message.objects.filter(
            direction="outbound", raw_payload__purpose="reply", sent_at__isnull=False
        ).count() < (args.notes):
            if time.monotonic() > deadline:
                print("timed out waiting for the replies")
                break
            time.sleep(0.5)

        downloaded, transcribed, transcribing, replied = [], [], [], []
        for media in Media.objects.select_related("message").filter(transcription_state="done"):
            assert media.transcribed_at is not None and media.downloaded_at is not None
            downloaded.append((media.downloaded_at - media.message.created_at).total_seconds() * 1000)
            transcribed.append((media.transcribed_at - media.message.created_at).total_seconds() * 1000)
            transcribing.append((media.transcribed_at - media.downloaded_at).total_seconds() * 1000)
        for note in Message.objects.filter(direction="inbound"):
            reply = (
                Message.objects.filter(
                    direction="outbound", conversation=note.conversation, raw_payload__purpose="reply", id__gt=note.id
                )
                .order_by("id")
                .first()
            )
            if reply is not None and reply.sent_at:
                replied.append((reply.sent_at - note.created_at).total_seconds() * 1000)
        print(
            f"{args.notes} voice notes ({len(audio)} bytes of OGG/Opus each) at {args.rate:g}/s; "
            f"transcriber delay {args.transcription_delay:g} s; INBOUND_COALESCE_SECONDS "
            f"{settings.INBOUND_COALESCE_SECONDS:g}; scripted model {args.model_delay_ms} ms; {os.cpu_count()} cores"
        )
        print(summary("webhook acknowledgement", poster.latencies_ms))
        print(summary("receipt -> audio downloaded", downloaded))
        print(summary("receipt -> transcript done", transcribed))
        print(summary("downloaded -> transcript done", transcribing))
        print(summary("receipt -> reply handed to Twilio", replied))
        print(
            f"transcriber saw {len(transcriber.stub.requests)} uploads; Twilio stub saw {len(twilio.stub.sent)} sends"
        )
        return 0
    finally:
        children_stop(children)
        teardown(data_dir)


if __name__ == "__main__":
    sys.exit(main())
