"""``make run``: the whole product on this machine, stopped cleanly with Ctrl-C.

Makes sure Redis answers (starting a local redis-server with
``scripts/ensure-redis`` when none does), migrates, seeds the demo organization,
then runs the web app under gunicorn, a Celery worker for emergency screening,
one for every other queue (turns, sends, voice-note transcription, ...) and
Celery beat as child processes that share this process's database (the
embedded PostgreSQL when no DATABASE_URL is set); a child that stops is
started again. On the way out (Ctrl-C, SIGTERM from ``kill`` or an IDE's
stop button, SIGHUP from a closed terminal) it stops the children, the
redis-server only if it started that one itself, and (atexit) the embedded
PostgreSQL. The children run in ``BASE_DIR`` whatever the caller's directory,
and on Linux die with this process even when it is killed with SIGKILL.

It listens on ``BIND`` (``--bind``). With ``--demo`` (``make demo``) the
services' logs go to ``$DATA_DIR/stack.log`` (``--service-log``), so the
terminal shows the banner, the demo's transcript and the landlord's view.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import IO

import redis
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from config.bind import local_base_url
from config.celery import QUEUES
from stack.demo import DEMO_LANDLORD_USERNAME, DEMO_WHATSAPP_NUMBER, demo_password, demo_prepare

STOP_GRACE_SECONDS = 20  # how long the services get, together, to stop before they are killed
RESTART_LIMIT = 5
RESTART_WINDOW_SECONDS = 60
# Signals that stop the stack as Ctrl-C does: `kill PID`, an IDE's stop button, a closed terminal.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def services_stop(children: list[subprocess.Popen], *, grace: float) -> None:
    """SIGTERM to each child still running; those not gone within ``grace``
    seconds, one period for all of them (one each let four slow ones take 80 s),
    are killed."""
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for child in children:
        try:
            child.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


class Command(BaseCommand):
    help = "Run web (gunicorn), the Celery workers and Celery beat until Ctrl-C; restart any that stops."

    def add_arguments(self, parser):
        parser.add_argument("--bind", default=settings.BIND, help="HOST:PORT gunicorn listens on (default: BIND)")
        parser.add_argument(
            "--web-workers", type=int, default=settings.WEB_CONCURRENCY, help="gunicorn workers (WEB_CONCURRENCY)"
        )
        parser.add_argument("--no-seed", action="store_true", help="Do not create the demo organization.")
        parser.add_argument("--demo", action="store_true", help="Play the demo conversation once the stack is up.")
        parser.add_argument("--exit-after-demo", action="store_true", help="Stop the stack when the demo has run.")
        parser.add_argument(
            "--service-log",
            type=Path,
            help="Write gunicorn's and Celery's logs to this file, not the terminal (--demo: $DATA_DIR/stack.log).",
        )

    def handle(self, *args, **options):
        # Without this a SIGTERM or SIGHUP would end the process at once: no
        # `finally` (the children, redis-server) and no atexit hook (the
        # embedded PostgreSQL's) would run. Ctrl-C too, explicitly: started
        # as a background job of a script, the process inherits SIGINT
        # ignored, and Ctrl-C would stop nothing. (All are ignored while
        # stopping: see _run.)
        previous = {signum: signal.signal(signum, _interrupt) for signum in (signal.SIGINT, *STOP_SIGNALS)}
        try:
            with redis_ensure(pidfile=settings.DATA_DIR / "redis.pid") as started:
                if started:
                    self.stdout.write(
                        f"Started redis-server (pid {started}) for {settings.REDIS_URL}; it stops with the stack."
                    )
                self._run(**options)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _run(
        self,
        *,
        bind: str,
        web_workers: int,
        no_seed: bool,
        demo: bool,
        exit_after_demo: bool,
        service_log: Path | None,
        **options,
    ):
        env = dict(os.environ)  # carries DATABASE_URL of the embedded server to the children
        bind_follow(bind, env)
        settings.DATA_DIR.mkdir(parents=True, exist_ok=True)
        if service_log is None and demo:
            service_log = settings.DATA_DIR / "stack.log"
        with ExitStack() as files:
            log = None  # None: the services write to this terminal
            if service_log:
                service_log.parent.mkdir(parents=True, exist_ok=True)
                service_log.write_text("")
                log = files.enter_context(service_log.open("a"))  # O_APPEND: the children's lines never overwrite
                self.stdout.write(f"Starting; the services' logs go to {service_log}")
            call_command("migrate", interactive=False, verbosity=0)
            # A fresh random landlord password each `make run`; the well-known one only for the demo.
            password = None if no_seed else demo_password(fixed=demo)
            if password:
                with _stderr_to(log):  # the embedding model's loading messages
                    demo_prepare(landlord_password=password, stdout=log)
            commands = self._commands(bind=bind, web_workers=web_workers)

            def start(name: str) -> subprocess.Popen:
                return service_start(commands[name], env=env, log=log)

            children: dict[str, subprocess.Popen] = {}
            try:  # from the first start: a stop signal at any point stops what has started
                children.update((name, start(name)) for name in commands)
                self._banner(bind, password=password, log_path=service_log)
                if demo:
                    self._wait_until_up(bind)
                    call_command("play_demo", url=local_base_url(bind))
                    if exit_after_demo:
                        return
                    self.stdout.write("\nThe demo has finished; the stack keeps running. Ctrl-C stops it.")
                failed = self._supervise(children, start)
                self.stderr.write(
                    f"{', '.join(failed)} kept stopping; shutting down the rest."
                    + (f" The services' log: {service_log}" if service_log else "")
                )
            except KeyboardInterrupt:  # Ctrl-C, or one of STOP_SIGNALS (_interrupt)
                with suppress(OSError):  # a closed terminal
                    self.stdout.write("\nStopping...")
            finally:
                for signum in (signal.SIGINT, *STOP_SIGNALS):  # a second Ctrl-C does not cut the stopping short
                    signal.signal(signum, signal.SIG_IGN)
                services_stop(list(children.values()), grace=STOP_GRACE_SECONDS)

    def _supervise(self, children: dict[str, subprocess.Popen], start) -> list[str]:
        """Start again any child that stops (a worker killed by the OOM killer,
        beat after Redis went away), as a process manager would. A child that
        stops ``RESTART_LIMIT`` times within ``RESTART_WINDOW_SECONDS`` is
        broken rather than unlucky: return the names of those."""
        stops: dict[str, list[float]] = {name: [] for name in children}
        while True:
            time.sleep(0.5)
            for name, child in list(children.items()):
                if child.poll() is None:
                    continue
                now = time.monotonic()
                stops[name] = [t for t in stops[name] if now - t < RESTART_WINDOW_SECONDS] + [now]
                if len(stops[name]) >= RESTART_LIMIT:
                    return [name]
                self.stderr.write(f"{name} stopped (exit {child.returncode}); starting it again")
                time.sleep(min(2 ** (len(stops[name]) - 1), 10))
                children[name] = start(name)

    def _commands(self, *, bind: str, web_workers: int) -> dict[str, list[str]]:
        python = sys.executable
        return {
            "web": [
                python,
                "-m",
                "gunicorn",
                "config.wsgi",
                "--bind",
                bind,
                "--workers",
                str(web_workers),
                "--timeout",
                "30",
                "--access-logfile",
                "-",
            ],
            # Screening for emergencies has a worker of its own, so a backlog
            # of turns never holds up a safety text.
            "worker-emergency": [
                python,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--loglevel=INFO",
                "-Q",
                "emergency",
                "--concurrency=1",
                "-n",
                "emergency@%h",
            ],
            "worker": [
                python,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--loglevel=INFO",
                "-Q",
                ",".join(queue for queue in QUEUES if queue != "emergency"),
                "--concurrency=2",
                "-n",
                "worker@%h",
            ],
            "beat": [
                python,
                "-m",
                "celery",
                "-A",
                "config",
                "beat",
                "--loglevel=INFO",
                "--schedule",
                str(settings.DATA_DIR / "celerybeat-schedule"),
            ],
        }

    def _wait_until_up(self, bind: str) -> None:
        import requests

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{local_base_url(bind)}/healthz", timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.5)
        raise CommandError(f"the web app did not answer on {bind} within 60 s")

    def _banner(self, bind: str, *, password: str | None, log_path: Path | None = None) -> None:
        local = local_base_url(bind)
        login = f"login {DEMO_LANDLORD_USERNAME} / {password}" if password else "(--no-seed: your own login)"
        self.stdout.write(
            self.style.SUCCESS("\nRepairs is running.\n")
            + f"  Webhook for Twilio:  {settings.PUBLIC_BASE_URL}/webhooks/twilio/whatsapp (local: {local})\n"
            + f"  Status callbacks:    {settings.PUBLIC_BASE_URL}/webhooks/twilio/status\n"
            + f"  Admin:               {local}/admin/  {login}\n"
            + f"  Demo WhatsApp number {DEMO_WHATSAPP_NUMBER}; model backend: {settings.LLM_BACKEND}"
            + (" (scripted: set ANTHROPIC_API_KEY for Claude)" if settings.LLM_BACKEND == "scripted" else "")
            + f"; sender: {settings.WHATSAPP_SENDER}\n"
            + (f"  Service logs:        {log_path}\n" if log_path else "")
            + "  Ctrl-C stops everything.\n"
        )


def bind_follow(bind: str, env: dict[str, str]) -> None:
    """Make ``--bind`` this run's ``BIND``: the children read it from ``env``,
    and unless ``PUBLIC_BASE_URL`` is set the webhook's public URL (which the
    banner prints and the demo's requests are signed over, here and in the
    children alike) becomes that address, as settings would have made it."""
    if bind == settings.BIND:
        return
    env["BIND"] = bind
    if "PUBLIC_BASE_URL" not in env:
        settings.PUBLIC_BASE_URL = local_base_url(bind)


@contextmanager
def redis_ensure(*, pidfile: Path) -> Iterator[int | None]:
    """Yield once Redis answers at REDIS_URL: None when one already did (it is
    left alone), else the pid of the local redis-server ``scripts/ensure-redis``
    started, which is stopped on the way out."""
    if _redis_answers():
        yield None
        return
    pidfile.parent.mkdir(parents=True, exist_ok=True)
    pidfile.unlink(missing_ok=True)
    script = settings.BASE_DIR / "scripts" / "ensure-redis"
    result = subprocess.run(
        [str(script)],
        cwd=settings.BASE_DIR,
        env={**os.environ, "REDIS_URL": settings.REDIS_URL, "REDIS_PIDFILE": str(pidfile)},
    )
    if result.returncode != 0:
        raise CommandError(f"no Redis at {settings.REDIS_URL} and none could be started (see above)")
    if not pidfile.exists():  # a server already listens there; the script left it alone, and so do we
        if not _redis_answers():
            raise CommandError(
                f"a server listens at {settings.REDIS_URL} but does not answer: check the password or TLS "
                "settings in REDIS_URL"
            )
        yield None
        return
    pid = int(pidfile.read_text())
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)


def service_start(command: list[str], *, env: dict[str, str], log: IO[str] | None) -> subprocess.Popen:
    """Start one of the services as a child of this process, writing to
    ``log`` (None: this terminal)."""
    return subprocess.Popen(
        command,
        cwd=settings.BASE_DIR,  # `config` is importable whatever directory run_stack was started in
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT if log else None,
        # Signals for the terminal's process group (Ctrl-C, SIGHUP when it closes) reach only
        # run_stack, which stops the children in order: gunicorn would take a SIGHUP as
        # "reload" and a Celery worker as "restart".
        process_group=0,
        preexec_fn=_dies_with_this_process(),
    )


def _interrupt(signum: int, frame: object) -> None:
    """Handler of SIGINT and STOP_SIGNALS: KeyboardInterrupt, as Python's own Ctrl-C handler raises."""
    raise KeyboardInterrupt(signal.Signals(signum).name)


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _dies_with_this_process() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the kernel send the child SIGTERM when this
    process dies, however it dies (SIGKILL, the OOM killer), so gunicorn, the
    workers and beat never outlive ``make run``. None off Linux, which has no
    such thing."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os.kill(os.getpid(), signal.SIGTERM)

    return preexec


@contextmanager
def _stderr_to(log) -> Iterator[None]:
    """Send this process's file descriptor 2 (logging, progress bars, C
    libraries) to ``log`` for the block; nothing changes when it is None."""
    if log is None:
        yield
        return
    sys.stderr.flush()
    log.flush()
    saved = os.dup(2)
    os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        log.flush()
        os.dup2(saved, 2)
        os.close(saved)


def _redis_answers() -> bool:
    try:
        return bool(redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=2).ping())
    except redis.RedisError:
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
