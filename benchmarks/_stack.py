"""Shared set-up for benchmarks that drive the real stack over HTTP: a
throwaway embedded PostgreSQL (its own data folder), a private Celery key
prefix in Redis, gunicorn (and optionally a Celery worker) as child processes,
and signed webhook posts as Twilio sends them."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AUTH_TOKEN = "load-benchmark-token"
ORG_NUMBER = "+14155550100"
WEBHOOK_PATH = "/webhooks/twilio/whatsapp"


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def configure(port: int, **env: str) -> Path:
    """Point Django at a fresh data folder (so the embedded PostgreSQL is a
    new one) and the settings every child process inherits."""
    data_dir = Path(tempfile.mkdtemp(prefix="repairs-bench-"))
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATA_DIR": str(data_dir),
            "CELERY_KEY_PREFIX": f"bench-{uuid.uuid4().hex[:8]}:",
            "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
            "WHATSAPP_SENDER": "console",
            "LLM_BACKEND": "scripted",
            "PUBLIC_BASE_URL": f"http://127.0.0.1:{port}",
            "LOG_LEVEL": "WARNING",
            **env,
        }
    )
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("ANTHROPIC_API_KEY", None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    return data_dir


def organization_with_tenants(count: int) -> list[str]:
    """One organization on ORG_NUMBER with ``count`` tenants, each with one
    current tenancy. Returns their phone numbers."""
    from properties.models import Organization, Property, Tenancy, Tenant, WhatsAppNumber

    org = Organization.objects.create(name="Load Lettings", slug="load", country="GB")
    WhatsAppNumber.objects.create(organization=org, number=ORG_NUMBER)
    phones = [f"+4477009{i:05d}" for i in range(count)]
    properties = Property.objects.bulk_create(
        Property(organization=org, code=f"P{i}", address=f"{i} Load Street, Leeds", postcode="LS1 1AA")
        for i in range(count)
    )
    tenants = Tenant.objects.bulk_create(
        Tenant(organization=org, phone=phone, name=f"Tenant {i}") for i, phone in enumerate(phones)
    )
    Tenancy.objects.bulk_create(
        Tenancy(tenant=t, property=p, start_date="2026-01-01") for t, p in zip(tenants, properties, strict=True)
    )
    return phones


def gunicorn_command(port: int, workers: int, app: str = "config.wsgi", threads: int = 4) -> list[str]:
    return [
        sys.executable,
        "-m",
        "gunicorn",
        app,
        "--pythonpath",
        str(ROOT / "benchmarks"),
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--threads",
        str(threads),
    ]


def worker_command(concurrency: int, queues: list[str] | None = None, name: str = "celery") -> list[str]:
    """A threads-pool worker on ``queues`` (every queue by default), named ``name@host``."""
    from config.celery import QUEUES

    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "config",
        "worker",
        "-Q",
        ",".join(queues or QUEUES),
        "--pool=threads",
        f"--concurrency={concurrency}",
        "--without-gossip",
        "--without-mingle",
        "--loglevel=WARNING",
        "-n",
        f"{name}@%h",
    ]


def children_start(port: int, commands: dict[str, list[str]]) -> dict[str, subprocess.Popen]:
    """Start the commands (their logs go to the data folder) and wait until
    gunicorn answers /healthz."""
    import requests

    log_dir = Path(os.environ["DATA_DIR"])
    env = dict(os.environ)  # carries the embedded server's DATABASE_URL
    children = {
        name: subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=(log_dir / f"{name}.log").open("w"), stderr=subprocess.STDOUT
        )
        for name, cmd in commands.items()
    }
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return children
        except requests.RequestException:
            time.sleep(0.3)
    children_stop(children)
    raise SystemExit(f"gunicorn did not answer /healthz within 60 s; see {log_dir}/web.log")


def children_stop(children: dict[str, subprocess.Popen]) -> None:
    for child in children.values():
        child.send_signal(signal.SIGTERM)
    for child in children.values():
        try:
            child.wait(timeout=20)
        except subprocess.TimeoutExpired:
            child.kill()


def teardown(data_dir: Path) -> None:
    from django.db import connections

    from config.celery import app

    app.control.purge()
    connections.close_all()
    shutil.rmtree(data_dir, ignore_errors=True)


class SignedPoster:
    """Posts form bodies to a path with Twilio's signature, one keep-alive
    session per thread, and records each request's latency in milliseconds."""

    def __init__(self, port: int, path: str = WEBHOOK_PATH):
        from twilio.request_validator import RequestValidator

        self.url = f"http://127.0.0.1:{port}{path}"
        self.validator = RequestValidator(AUTH_TOKEN)
        self.latencies_ms: list[float] = []
        self.accepted: dict[str, float] = {}  # MessageSid -> wall time first accepted
        self._lock = threading.Lock()
        self._local = threading.local()

    def post(self, params: dict[str, str]) -> None:
        import requests

        session = getattr(self._local, "session", None) or requests.Session()
        self._local.session = session
        headers = {"X-Twilio-Signature": self.validator.compute_signature(self.url, params)}
        started = time.monotonic()
        response = session.post(self.url, data=params, headers=headers, timeout=30)
        elapsed_ms = (time.monotonic() - started) * 1000
        if response.status_code != 200:
            raise RuntimeError(f"{self.url} answered {response.status_code}: {response.text[:200]}")
        with self._lock:
            self.latencies_ms.append(elapsed_ms)
            if "MessageSid" in params:
                self.accepted.setdefault(params["MessageSid"], time.time())


def inbound(phone: str, body: str) -> dict[str, str]:
    return {
        "MessageSid": f"SM{uuid.uuid4().hex}",
        "AccountSid": "AC" + "0" * 32,
        "From": f"whatsapp:{phone}",
        "To": f"whatsapp:{ORG_NUMBER}",
        "Body": body,
        "NumMedia": "0",
    }


class PrivateRedis:
    """A redis-server of the benchmark's own on a free port, which it may stop
    (SIGKILL, as a crash) and start again on the same port."""

    def __init__(self, workdir: Path):
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.workdir = workdir
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        import redis

        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            cwd=self.workdir,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if client.ping():
                    return
            except redis.RedisError:
                time.sleep(0.1)
        raise SystemExit(f"redis-server on port {self.port} did not answer")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
