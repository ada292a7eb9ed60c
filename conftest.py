"""Fixtures every app's tests share: a real Celery worker on real Redis, a
private Redis that a test may stop, and the Anthropic stub."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection, connections

from config.celery import QUEUES
from conversations.testing.signing import WEBHOOK_PATH, inbound_params, twilio_signature
from conversations.testing.transcription_stub import TranscriptionStubServer
from conversations.testing.twilio_stub import TwilioStubServer

# Fixtures of a tenant talking to the product, shared by several apps' tests.
pytest_plugins = ["orchestration.testing.fixtures"]

ROOT = Path(__file__).resolve().parent
AUTH_TOKEN = "test-auth-token"  # noqa: S105 - signs test webhooks only
# Browser tests drive Debian's chromium (scripts/install-system-deps), never a downloaded one.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class WorkerProcess:
    """A real ``celery worker`` subprocess on every queue, using the test
    database and this run's own Redis key prefix."""

    def __init__(self, log: Path, env: dict[str, str], name: str):
        self.log_path = log
        self.env = env
        self.name = name
        self.proc: subprocess.Popen | None = None

    def start(self) -> WorkerProcess:
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "--concurrency=1",
            "-Q",
            ",".join(QUEUES),
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            self.name,
            "--loglevel=INFO",
        ]
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        self.proc = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=self.log_path.open("a"), stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 60
        while "ready." not in self.log_path.read_text()[offset:]:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                pytest.fail(f"Celery worker did not start:\n{self.log_path.read_text()}")
            time.sleep(0.2)
        return self

    def kill(self) -> None:
        """SIGKILL: no warm shutdown, no acknowledgement of the running task."""
        assert self.proc is not None, "kill() before start()"
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def poll(self):
        return self.proc.poll()


@pytest.fixture
def celery_worker_factory(transactional_db, tmp_path):
    """Make (not yet started) workers; ``extra_env`` overrides settings such as
    REDIS_URL. Tests that use it must commit their data (``transactional_db``)
    so the worker can see it. Every worker is stopped at the end."""
    workers: list[WorkerProcess] = []

    def make(**extra_env: str) -> WorkerProcess:
        env = {
            **os.environ,
            "DATABASE_URL": database_url_for_children(),
            "CELERY_KEY_PREFIX": os.environ["CELERY_KEY_PREFIX"],
            "PYTHONUNBUFFERED": "1",
            # The test's own media folder: a worker that downloads a file stores it where the test reads it.
            "MEDIA_ROOT": str(settings.MEDIA_ROOT),
            **extra_env,
        }
        worker = WorkerProcess(tmp_path / f"worker-{len(workers)}.log", env, f"test-{os.getpid()}-{len(workers)}@%h")
        workers.append(worker)
        return worker

    yield make
    for worker in workers:
        worker.stop()


@pytest.fixture
def celery_worker_process(celery_worker_factory):
    """One started worker on the shared Redis."""
    return celery_worker_factory().start()


def database_url_for_children() -> str:
    """The test database as a URL a child process can use. The embedded server
    listens on a unix socket whose directory dj-database-url puts in OPTIONS."""
    db = connection.settings_dict
    host = db.get("HOST") or db.get("OPTIONS", {}).get("host", "")
    if db.get("PORT"):
        return f"postgresql://{db['USER']}:{db['PASSWORD']}@{host}:{db['PORT']}/{db['NAME']}"
    return f"postgresql://{db['USER']}:@/{db['NAME']}?host={host}"


def wait_for(predicate, *, timeout: float = 30.0, interval: float = 0.1, message: str = "condition"):
    """Poll ``predicate`` until it is truthy; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout}s waiting for {message}")


def deliver_concurrently(params_list: list[dict]) -> list[int]:
    """Post each signed webhook from its own thread, all released at the same
    moment (Twilio retrying, a tenant's burst); returns the status codes."""
    import threading

    from django.test import Client

    url = f"{settings.PUBLIC_BASE_URL}{WEBHOOK_PATH}"
    barrier = threading.Barrier(len(params_list))
    statuses = []

    def deliver(params):
        signature = twilio_signature(auth_token=AUTH_TOKEN, url=url, params=params)
        barrier.wait()
        try:
            statuses.append(Client().post(WEBHOOK_PATH, params, HTTP_X_TWILIO_SIGNATURE=signature).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=deliver, args=(params,)) for params in params_list]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


@pytest.fixture
def anthropic_stub(settings, monkeypatch):
    """The real anthropic SDK pointed at a local stub server. Also exported in the
    environment, so a Celery worker started after this fixture uses it too."""
    from llm.anthropic_backend import _client
    from orchestration.testing.anthropic_stub import AnthropicStubServer

    with AnthropicStubServer() as server:
        values = {
            "LLM_BACKEND": "anthropic",
            "ANTHROPIC_API_KEY": "test-key-not-real",
            "ANTHROPIC_BASE_URL": server.url,
            "LLM_TIMEOUT_SECONDS": "2",
            "LLM_MAX_RETRIES": "2",
        }
        for name, value in values.items():
            monkeypatch.setenv(name, value)
        settings.LLM_BACKEND = "anthropic"
        settings.ANTHROPIC_API_KEY = values["ANTHROPIC_API_KEY"]
        settings.ANTHROPIC_BASE_URL = server.url
        settings.LLM_TIMEOUT_SECONDS = 2.0
        settings.LLM_MAX_RETRIES = 2
        _client.cache_clear()
        yield server.stub
        _client.cache_clear()


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture(autouse=True)
def _process_caches_empty():
    """Each test's rows are new (rolled back after the last test): nothing a
    process cache holds (config/expiring.py) may outlive its test."""
    from config.expiring import expiring_clear_all
    from config.tasks import broker_failure_forget

    expiring_clear_all()
    broker_failure_forget()


def pytest_sessionfinish(session, exitstatus):
    # Drop this run's Celery keys from the shared Redis.
    try:
        import redis

        client = redis.Redis.from_url(settings.REDIS_URL)
        prefix = os.environ.get("CELERY_KEY_PREFIX", "")
        if prefix:
            for key in client.scan_iter(f"{prefix}*"):
                client.delete(key)
    except Exception:  # noqa: S110 - best-effort cleanup of a shared Redis
        pass


class RedisServer:
    """A redis-server of the test's own on a free port, which the test may stop
    and start again (the shared one at 127.0.0.1:6379 is never touched)."""

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
        wait_for(lambda: _ping(redis.Redis.from_url(self.url)), timeout=10, message="private redis-server")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _ping(client) -> bool:
    try:
        return bool(client.ping())
    except Exception:
        return False


@pytest.fixture
def private_redis(tmp_path, settings):
    """A private Redis that this process's Celery app publishes to (workers
    started with ``REDIS_URL=private_redis.url`` consume from it)."""
    from config.celery import app

    server = RedisServer(tmp_path)
    server.start()
    original = app.conf.broker_url

    def use(url: str) -> None:
        # The namespaced key: with celery 5.6 it wins over a plain broker_url.
        app.conf["CELERY_BROKER_URL"] = url
        app._pool = None  # drop pooled connections to the previous broker
        app.amqp._producer_pool = None

    use(server.url)
    settings.REDIS_URL = server.url
    yield server
    use(original)
    server.stop()


@pytest.fixture(autouse=True)
def _twilio_settings(settings):
    settings.TWILIO_AUTH_TOKEN = AUTH_TOKEN
    settings.TWILIO_ACCOUNT_SID = "AC" + "1" * 32
    settings.PUBLIC_BASE_URL = "https://repairs.example.com"


@pytest.fixture
def twilio_stub(settings, monkeypatch):
    """The real twilio SDK pointed at a local stub; exported in the environment
    so a Celery worker started afterwards uses it too."""
    from conversations.twilio_client import _client

    with TwilioStubServer() as server:
        values = {
            "TWILIO_API_BASE_URL": server.url,
            "TWILIO_ACCOUNT_SID": settings.TWILIO_ACCOUNT_SID,
            "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
            "WHATSAPP_SENDER": "twilio",
            "TWILIO_MEDIA_HOSTS": "api.twilio.com,twiliocdn.com,127.0.0.1",
        }
        for name, value in values.items():
            monkeypatch.setenv(name, value)
        settings.TWILIO_API_BASE_URL = server.url
        settings.WHATSAPP_SENDER = "twilio"
        settings.TWILIO_MEDIA_HOSTS = ["api.twilio.com", "twiliocdn.com", "127.0.0.1"]
        _client.cache_clear()
        yield server.stub
        _client.cache_clear()


@pytest.fixture(autouse=True)
def _transcription_off(settings, monkeypatch):
    """No test reaches a real transcriber, whatever the developer's environment
    says: transcription is off unless a test asks for the stub."""
    settings.TRANSCRIPTION_BACKEND, settings.TRANSCRIPTION_BASE_URL = "off", ""
    for name in ("TRANSCRIPTION_BASE_URL", "TRANSCRIPTION_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRANSCRIPTION_BACKEND", "off")


@pytest.fixture
def transcription_stub(settings, monkeypatch):
    """A local OpenAI-compatible transcription server, with the http
    transcriber pointed at it; exported in the environment so a Celery worker
    started afterwards uses it too."""
    with TranscriptionStubServer() as server:
        values = {
            "TRANSCRIPTION_BACKEND": "http",
            "TRANSCRIPTION_BASE_URL": server.url,
            "TRANSCRIPTION_API_KEY": "test-transcription-key",
            "TRANSCRIPTION_MODEL": "whisper-1",
            "TRANSCRIPTION_TIMEOUT_SECONDS": "5",
        }
        for name, value in values.items():
            monkeypatch.setenv(name, value)
        settings.TRANSCRIPTION_BACKEND = "http"
        settings.TRANSCRIPTION_BASE_URL = server.url
        settings.TRANSCRIPTION_API_KEY = values["TRANSCRIPTION_API_KEY"]
        settings.TRANSCRIPTION_MODEL = "whisper-1"
        settings.TRANSCRIPTION_TIMEOUT_SECONDS = 5.0
        yield server.stub


_SPOKEN: dict[str, bytes] = {}


def spoken_ogg(text: str, *, tmp: Path) -> bytes:
    """``text`` said by espeak-ng and encoded to OGG/Opus by ffmpeg, as a
    WhatsApp voice note is (both installed by scripts/install-system-deps);
    the test is skipped, saying why, where they are missing."""
    import shutil

    if text in _SPOKEN:
        return _SPOKEN[text]
    missing = [name for name in ("espeak-ng", "ffmpeg") if shutil.which(name) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (scripts/install-system-deps installs them)")
    wav, ogg = tmp / "spoken.wav", tmp / "spoken.ogg"
    subprocess.run(["espeak-ng", "-w", str(wav), text], check=True, capture_output=True)
    subprocess.run(
        ["ffmpeg", "-y", "-loglevel", "error", "-i", str(wav), "-c:a", "libopus", "-b:a", "24k", str(ogg)],
        check=True,
        capture_output=True,
    )
    _SPOKEN[text] = ogg.read_bytes()
    return _SPOKEN[text]


@pytest.fixture
def voice_note(tmp_path):
    """Make a real voice note: ``voice_note("I can smell gas")`` -> OGG/Opus bytes."""
    return lambda text: spoken_ogg(text, tmp=tmp_path)


@pytest.fixture
def post_inbound(client):
    """Post a signed webhook request; returns the response."""

    def post(params=None, *, signature=None, **kwargs):
        params = params or inbound_params(**kwargs)
        url = f"{settings.PUBLIC_BASE_URL}{WEBHOOK_PATH}"
        sig = signature if signature is not None else twilio_signature(auth_token=AUTH_TOKEN, url=url, params=params)
        response = client.post(WEBHOOK_PATH, params, HTTP_X_TWILIO_SIGNATURE=sig)
        response.params = params
        return response

    return post


@pytest.fixture
def queued(monkeypatch):
    """Tasks queued, captured at Celery's send_task boundary as (name, args,
    the queue task_routes sends it to)."""
    from config.celery import app

    calls = []

    def send_task(name, args=None, **options):
        calls.append((name, args, app.amqp.router.route(options, name)["queue"].name))

    monkeypatch.setattr(app, "send_task", send_task)
    return calls


@pytest.fixture
def browser_page(monkeypatch):
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: run scripts/install-system-deps (make test does)")
    # Playwright's sync API runs an event loop in this thread; the ORM calls the
    # test makes between browser steps are ordinary synchronous code.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(20_000)
        try:
            yield page
        finally:
            context.close()
            browser.close()
            # While Playwright's loop runs, Django keeps this thread's database
            # connection in a separate context; close it here or it outlives
            # the test and blocks dropping the test database.
            connections.close_all()
