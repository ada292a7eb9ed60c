"""Settings, all read from environment variables (documented in docs/operations.md).

Development needs none of them: the database is an embedded PostgreSQL, Redis is
the local one, messages go to the console and the model is the scripted one.
``DJANGO_ENV=production`` refuses to start without its secrets.
"""

from __future__ import annotations

import datetime
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config import tasks
from config.bind import local_base_url, url_host

BASE_DIR = Path(__file__).resolve().parent.parent

# One BLAS thread per process: the processes are the parallelism, and idle
# OpenBLAS threads spin on the cores the embedding engine needs (an emergency
# score took 27 ms median and 116 ms p95 with them, 12 and 16 without:
# docs/benchmarks.md). Set before anything imports numpy; the environment wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


Number = TypeVar("Number", int, float)


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    if value.lower() in {"1", "true", "yes", "on"}:
        return True
    if value.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {value!r}")


def env_int(name: str, default: int) -> int:
    return _env_number(name, default, int, "a whole number")


def env_float(name: str, default: float) -> float:
    return _env_number(name, default, float, "a number")


def _env_number(name: str, default: Number, parse: Callable[[str], Number], kind: str) -> Number:
    """The number in ``name``, or the default when it is unset or empty; a
    value that is not one stops the start naming the variable and the value."""
    value = os.environ.get(name)
    if not value:
        return default
    try:
        return parse(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be {kind}, not {value!r}") from None


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in env(name, default).split(",") if item.strip()]


def env_dict(name: str) -> dict[str, str]:
    """``a=1,b=2`` -> ``{"a": "1", "b": "2"}``."""
    pairs = {}
    for item in env_list(name):
        key, sep, value = (part.strip() for part in item.partition("="))
        if not (sep and key and value):
            raise ImproperlyConfigured(f"{name} takes comma-separated name=value items, not {item!r}")
        pairs[key] = value
    return pairs


TESTING = "pytest" in sys.modules
DJANGO_ENV = env("DJANGO_ENV") or "development"
if DJANGO_ENV not in {"development", "production"}:
    raise ImproperlyConfigured(f"DJANGO_ENV must be development or production, not {DJANGO_ENV!r}")
PRODUCTION = DJANGO_ENV == "production"

# --- Core -------------------------------------------------------------------

DEVELOPMENT_SECRET_KEY = "development-only-insecure-key"  # noqa: S105 - public, refused in production
SECRET_KEY = env("DJANGO_SECRET_KEY")
if not SECRET_KEY:
    if PRODUCTION:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY is required when DJANGO_ENV=production")
    SECRET_KEY = DEVELOPMENT_SECRET_KEY
if PRODUCTION and SECRET_KEY == DEVELOPMENT_SECRET_KEY:
    raise ImproperlyConfigured("DJANGO_SECRET_KEY is the public development key; production needs a secret one")
DEBUG = env_bool("DJANGO_DEBUG", not PRODUCTION)
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured(
        "DJANGO_DEBUG must be off when DJANGO_ENV=production (debug pages show settings and code to anyone)"
    )
# Where `make run` listens (gunicorn's --bind, HOST:PORT); `manage.py chat` and
# `play_demo` talk to it there. Development only: the Docker image binds 0.0.0.0:8000.
BIND = env("BIND", "127.0.0.1:8000")
# The public base URL Twilio posts to (scheme and host, no trailing slash). The
# webhook signature is computed over it, never over the Host header. In
# development it defaults to BIND's address, where the local stack listens.
PUBLIC_BASE_URL = env("PUBLIC_BASE_URL", "" if PRODUCTION else local_base_url(BIND)).rstrip("/")
if PRODUCTION and not PUBLIC_BASE_URL:
    raise ImproperlyConfigured("PUBLIC_BASE_URL is required when DJANGO_ENV=production (Twilio signs that URL)")
# In development the local names and PUBLIC_BASE_URL's host (a tunnel's), so that
# setting the tunnel's address is enough; production names its hosts itself.
ALLOWED_HOSTS = env_list(
    "ALLOWED_HOSTS",
    ""
    if PRODUCTION
    else ",".join(dict.fromkeys(["localhost", "127.0.0.1", "[::1]", "testserver", url_host(PUBLIC_BASE_URL)])),
)
if PRODUCTION and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS is required when DJANGO_ENV=production")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", PUBLIC_BASE_URL)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if PRODUCTION else None
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = PRODUCTION

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "axes",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "properties",
    "conversations",
    "retrieval",
    "issues",
    "emergencies",
    "orchestration",
    # Tenants' data rights: export, erasure, retention, the audit log (docs/data-protection.md).
    "auditlog",
    "privacy",
    "evals",
    "api",
    "stack",
    # The admin's first screen: the agency's day (docs/repair-loop.md).
    "dashboard",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Who viewed a tenant's records (admin pages, API reads) into the audit log, and
    # who made each model change (django-auditlog's actor, also for API tokens).
    "privacy.middleware.AuditMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its 429 page.
    "axes.middleware.AxesMiddleware",
]

# --- Login lockout (django-axes) ----------------------------------------------

# Every login (admin, API session) goes through axes first: after
# LOGIN_FAILURE_LIMIT wrong passwords for one username, or from one client IP,
# that username or IP is refused (429) even with the right password, for
# LOGIN_LOCKOUT_MINUTES (0: until an operator runs `manage.py axes_reset...`).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
login_lockout_minutes = env_int("LOGIN_LOCKOUT_MINUTES", 30)
AXES_COOLOFF_TIME = datetime.timedelta(minutes=login_lockout_minutes) if login_lockout_minutes > 0 else None
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]  # each on its own: a user, or an IP
AXES_RESET_ON_SUCCESS = True
AXES_ENABLE_ADMIN = True  # attempts and lockouts are visible (and deletable) in the admin
# Behind TRUSTED_PROXY_COUNT proxies the client IP is read from X-Forwarded-For
# (the entry that many hops from the right); with 0, REMOTE_ADDR.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0)
AXES_CLIENT_IP_CALLABLE = "config.client_ip.client_ip"

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------

DATA_DIR = Path(env("DATA_DIR", str(BASE_DIR / ".data")))
DATABASE_URL = env("DATABASE_URL")
if not DATABASE_URL:
    if PRODUCTION:
        raise ImproperlyConfigured("DATABASE_URL is required when DJANGO_ENV=production")
    from config.embedded_postgres import embedded_database_url

    DATABASE_URL = embedded_database_url(data_dir=DATA_DIR / "postgres", throwaway=TESTING)
    # Child processes (a Celery worker started by the tests or by `make run`)
    # use the same server instead of starting their own.
    os.environ["DATABASE_URL"] = DATABASE_URL

DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 60))}
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DATABASES["default"]["ATOMIC_REQUESTS"] = False
# An unreachable database fails fast (a 503 from /healthz, a retry in a task) instead of hanging.
DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = env_int("DB_CONNECT_TIMEOUT", 5)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis and Celery -------------------------------------------------------

REDIS_URL = env("REDIS_URL", "redis://127.0.0.1:6379/0")
if TESTING and (not env("CELERY_KEY_PREFIX") or env("PYTEST_XDIST_WORKER")):
    # Each test process gets its own Celery keys in the shared Redis (each of
    # pytest-xdist's workers too: they would inherit the controller's); the
    # worker processes the tests start inherit the prefix through the environment.
    os.environ["CELERY_KEY_PREFIX"] = f"test-{os.getpid()}:"
CELERY_BROKER_URL = REDIS_URL
# kombu's Redis transport, reusing one client per channel to publish (config/redis_broker.py);
# other schemes (rediss:// for TLS, sentinel://) keep kombu's own, which their URLs select.
if REDIS_URL.startswith("redis://"):
    CELERY_BROKER_TRANSPORT = "config.redis_broker:Transport"
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = env_int("CELERY_WORKER_PREFETCH_MULTIPLIER", 1)
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Must exceed the longest task (a turn with model retries) so Redis does not
# hand an unacknowledged task to a second worker while the first runs.
visibility_timeout = env_int("CELERY_VISIBILITY_TIMEOUT", 600)
# A webhook must answer even when Redis is down: publishing gives up quickly
# and the sweeper re-queues what was stored.
# After a publish fails, a process queues nothing for this long (the sweepers
# re-queue from the database): a Redis that hangs costs one socket timeout, not
# one per task a webhook queues.
BROKER_RETRY_AFTER_SECONDS = env_float("BROKER_RETRY_AFTER_SECONDS", 5.0)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # Several deployments (or test runs) can share one Redis without taking
    # each other's tasks.
    "global_keyprefix": env("CELERY_KEY_PREFIX", ""),
    "socket_connect_timeout": env_float("REDIS_CONNECT_TIMEOUT", 1.0),
    "socket_timeout": env_float("REDIS_SOCKET_TIMEOUT", 5.0),
    "max_retries": 1,
    # ...and retries at once: with kombu's default 2 s pause, a webhook whose
    # message queues four tasks (turn, photos, emergency check) waited 8 s for
    # a Redis that is down before it could answer the safety reply.
    "interval_start": 0,
    "visibility_timeout": visibility_timeout,
    # How often a worker looks for tasks whose worker died (after the visibility
    # timeout): every interval x throttle seconds, kombu's 10 x 10 by default.
    "unacked_restore_interval": env_int("CELERY_UNACKED_RESTORE_INTERVAL", 10),
    "unacked_restore_throttle": env_int("CELERY_UNACKED_RESTORE_THROTTLE", 10),
}
# A hung task (a stuck socket, a runaway document) frees its worker slot: the
# soft limit raises inside the task, the hard limit kills the process. Both stay
# below the visibility timeout, so Redis never hands a running task to a second
# worker. CELERY_TASK_TIME_LIMIT=0 turns both off (only for tests that
# shorten the visibility timeout).
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 540) or None
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 480) if CELERY_TASK_TIME_LIMIT else None
if CELERY_TASK_TIME_LIMIT and not (CELERY_TASK_SOFT_TIME_LIMIT or 0) < CELERY_TASK_TIME_LIMIT < visibility_timeout:
    raise ImproperlyConfigured(
        "Need CELERY_TASK_SOFT_TIME_LIMIT < CELERY_TASK_TIME_LIMIT < CELERY_VISIBILITY_TIMEOUT "
        "(a task still running past the visibility timeout is handed to a second worker)"
    )
# Workers reconnect for as long as Redis is away (publishers give up after
# one quick retry through the transport options above).
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_TASK_PUBLISH_RETRY = False
CELERY_BEAT_SCHEDULE: dict = {}

# --- Channel: Twilio and WhatsApp -------------------------------------------

TWILIO_ACCOUNT_SID = env("TWILIO_ACCOUNT_SID")
TWILIO_AUTH_TOKEN = env("TWILIO_AUTH_TOKEN")
# Where the twilio SDK sends REST calls; tests point it at a local stub server.
TWILIO_API_BASE_URL = env("TWILIO_API_BASE_URL", "")
# Verify X-Twilio-Signature on every webhook. Only ever off in local tinkering.
TWILIO_VALIDATE_SIGNATURE = env_bool("TWILIO_VALIDATE_SIGNATURE", True)
if PRODUCTION and not TWILIO_VALIDATE_SIGNATURE:
    raise ImproperlyConfigured("TWILIO_VALIDATE_SIGNATURE cannot be turned off when DJANGO_ENV=production")
WHATSAPP_SENDER = env("WHATSAPP_SENDER", "twilio" if PRODUCTION else "console")
if WHATSAPP_SENDER not in {"twilio", "console"}:
    raise ImproperlyConfigured("WHATSAPP_SENDER must be 'twilio' or 'console'")
if WHATSAPP_SENDER == "twilio" and not (TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN):
    raise ImproperlyConfigured("WHATSAPP_SENDER=twilio needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN")
if PRODUCTION and not TWILIO_AUTH_TOKEN:
    raise ImproperlyConfigured("TWILIO_AUTH_TOKEN is required when DJANGO_ENV=production")
if not TWILIO_AUTH_TOKEN and WHATSAPP_SENDER == "console":
    # Development without Twilio: `make demo` and `manage.py chat` sign their
    # webhook requests with this token, so signatures are checked there too.
    TWILIO_AUTH_TOKEN = "development-auth-token"  # noqa: S105 - never used with the twilio sender
# The sender's own WhatsApp number used for outbound messages when no
# Messaging Service is configured for the organization.
WHATSAPP_DEFAULT_FROM = env("WHATSAPP_DEFAULT_FROM", "")
# Messages from one tenant that arrive within this many seconds are answered as one turn.
INBOUND_COALESCE_SECONDS = env_float("INBOUND_COALESCE_SECONDS", 3.0)
# Inbound messages not processed after this many seconds are re-queued by the sweeper.
# The Retry-After of a webhook's 503 while PostgreSQL is unreachable (Twilio retries).
WEBHOOK_RETRY_AFTER_SECONDS = env_int("WEBHOOK_RETRY_AFTER_SECONDS", 5)
INBOUND_SWEEP_GRACE_SECONDS = env_int("INBOUND_SWEEP_GRACE_SECONDS", 60)
OUTBOUND_SWEEP_GRACE_SECONDS = env_int("OUTBOUND_SWEEP_GRACE_SECONDS", 120)
SWEEP_INTERVAL_SECONDS = env_int("SWEEP_INTERVAL_SECONDS", 30)
# A queued task (inbound processing, outbound sending, media download) holds a
# lease this long: the sweeper does not queue it again meanwhile, however long
# the queue. It queues one thing again at most SWEEP_MAX_REQUEUES times, then
# gives up (media and outbound fail with the reason; inbound is flagged).
SWEEP_LEASE_SECONDS = env_int("SWEEP_LEASE_SECONDS", 300)
SWEEP_MAX_REQUEUES = env_int("SWEEP_MAX_REQUEUES", 5)
CELERY_BEAT_SCHEDULE["channel-sweep"] = {"task": tasks.CHANNEL_SWEEP, "schedule": SWEEP_INTERVAL_SECONDS}
# Approved WhatsApp templates for messages outside the 24-hour window, per purpose:
# WHATSAPP_TEMPLATES="issue_update=HX...,generic=HX..."
WHATSAPP_TEMPLATES = env_dict("WHATSAPP_TEMPLATES")
TWILIO_TIMEOUT_SECONDS = env_float("TWILIO_TIMEOUT_SECONDS", 10.0)
# How long a process trusts what it read of an organization's numbers and its
# emergency rules (config/expiring.py): an edit in another process applies
# within this many seconds, in the same one at once; 0 reads them every time.
PROCESS_CACHE_SECONDS = env_float("PROCESS_CACHE_SECONDS", 5.0)
# Longer bodies are stored cut to this length (the whole payload stays in raw_payload).
INBOUND_MAX_BODY_CHARS = env_int("INBOUND_MAX_BODY_CHARS", 4096)
WHATSAPP_SESSION_WINDOW_HOURS = env_int("WHATSAPP_SESSION_WINDOW_HOURS", 24)
# Hosts (and their subdomains) media may be downloaded from. Our Twilio credentials
# go only to Twilio's media path on api.twilio.com, never to the CDN it redirects to.
# Development adds this machine, where `manage.py chat --media` serves its photo.
TWILIO_MEDIA_HOSTS = env_list(
    "TWILIO_MEDIA_HOSTS", "api.twilio.com,twiliocdn.com,twilio.com" + ("" if PRODUCTION else ",127.0.0.1")
)
# Development only: media may be fetched from this machine (plain 127.0.0.1 or
# localhost on TWILIO_MEDIA_HOSTS, over HTTP, any port). Everywhere else IP
# literals, userinfo, backslashes and non-default ports in a media URL are refused.
MEDIA_FETCH_LOCAL = env_bool("MEDIA_FETCH_LOCAL", not PRODUCTION)
if PRODUCTION and MEDIA_FETCH_LOCAL:
    raise ImproperlyConfigured("MEDIA_FETCH_LOCAL must stay off when DJANGO_ENV=production")
MEDIA_ALLOWED_TYPES = env_list(
    "MEDIA_ALLOWED_TYPES",
    "image/jpeg,image/png,image/webp,image/heic,image/gif,video/mp4,application/pdf,"
    # WhatsApp voice notes are OGG/Opus; forwarded audio comes in the others.
    "audio/ogg,audio/opus,audio/mpeg,audio/mp4,audio/aac,audio/amr",
)
MEDIA_MAX_IMAGE_BYTES = env_int("MEDIA_MAX_IMAGE_BYTES", 5 * 1024 * 1024)
# Voice notes: the size cap of an audio file, and the longest we transcribe.
MEDIA_MAX_AUDIO_BYTES = env_int("MEDIA_MAX_AUDIO_BYTES", 16 * 1024 * 1024)
MEDIA_MAX_AUDIO_SECONDS = env_int("MEDIA_MAX_AUDIO_SECONDS", 300)
MEDIA_MAX_TOTAL_BYTES = env_int("MEDIA_MAX_TOTAL_BYTES", 16 * 1024 * 1024)
# Twilio can answer 404 for a photo for a moment after the webhook: try again
# this many times, waiting MEDIA_NOT_FOUND_BACKOFF_SECONDS, then twice as long, ...
MEDIA_NOT_FOUND_RETRIES = env_int("MEDIA_NOT_FOUND_RETRIES", 3)
MEDIA_NOT_FOUND_BACKOFF_SECONDS = env_float("MEDIA_NOT_FOUND_BACKOFF_SECONDS", 0.5)

# --- Voice notes, photos the model sees, location pins (docs/whatsapp.md) ---

# The transcriber: "http" (an OpenAI-compatible POST /v1/audio/transcriptions:
# hosted Whisper, faster-whisper-server, whisper.cpp's server) or "off".
TRANSCRIPTION_BASE_URL = env("TRANSCRIPTION_BASE_URL", "")
TRANSCRIPTION_BACKEND = env("TRANSCRIPTION_BACKEND", "http" if TRANSCRIPTION_BASE_URL else "off")
if TRANSCRIPTION_BACKEND not in {"http", "off"}:
    raise ImproperlyConfigured("TRANSCRIPTION_BACKEND must be 'http' or 'off'")
if TRANSCRIPTION_BACKEND == "http" and not TRANSCRIPTION_BASE_URL:
    raise ImproperlyConfigured("TRANSCRIPTION_BACKEND=http needs TRANSCRIPTION_BASE_URL")
TRANSCRIPTION_API_KEY = env("TRANSCRIPTION_API_KEY", "")
TRANSCRIPTION_MODEL = env("TRANSCRIPTION_MODEL", "whisper-1")
TRANSCRIPTION_TIMEOUT_SECONDS = env_float("TRANSCRIPTION_TIMEOUT_SECONDS", 60.0)
TRANSCRIPTION_MAX_RETRIES = env_int("TRANSCRIPTION_MAX_RETRIES", 4)
# How long a turn waits for its voice notes' transcripts before it goes on
# (and asks the tenant to type).
TRANSCRIPTION_WAIT_SECONDS = env_float("TRANSCRIPTION_WAIT_SECONDS", 30.0)

# Photos shown to the model (an organization can turn it off): the longest
# edge they are resized to, their JPEG quality, and how many go in one turn.
VISION_ENABLED = env_bool("VISION_ENABLED", True)
VISION_MAX_EDGE_PIXELS = env_int("VISION_MAX_EDGE_PIXELS", 1568)
VISION_JPEG_QUALITY = env_int("VISION_JPEG_QUALITY", 85)
VISION_MAX_IMAGES_PER_TURN = env_int("VISION_MAX_IMAGES_PER_TURN", 4)

# A location pin from an unknown number proposes the nearest property within this distance.
LOCATION_MATCH_MAX_METRES = env_int("LOCATION_MATCH_MAX_METRES", 150)

# --- The model --------------------------------------------------------------

ANTHROPIC_API_KEY = env("ANTHROPIC_API_KEY")
# Where the anthropic SDK sends requests; tests point it at a local stub server.
ANTHROPIC_BASE_URL = env("ANTHROPIC_BASE_URL", "")
LLM_BACKEND = env("LLM_BACKEND", "anthropic" if ANTHROPIC_API_KEY or PRODUCTION else "scripted")
if LLM_BACKEND not in {"anthropic", "scripted"}:
    raise ImproperlyConfigured("LLM_BACKEND must be 'anthropic' or 'scripted'")
if LLM_BACKEND == "anthropic" and not ANTHROPIC_API_KEY:
    raise ImproperlyConfigured("LLM_BACKEND=anthropic needs ANTHROPIC_API_KEY")
USE_LLM_ORCHESTRATION = env_bool("USE_LLM_ORCHESTRATION", True)
LLM_MODEL_LARGE = env("LLM_MODEL_LARGE", "claude-sonnet-4-6")
LLM_MODEL_SMALL = env("LLM_MODEL_SMALL", "claude-haiku-4-5")
LLM_TIMEOUT_SECONDS = env_float("LLM_TIMEOUT_SECONDS", 30.0)
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", 2)
LLM_MAX_TOKENS = env_int("LLM_MAX_TOKENS", 1024)
# A half-finished report idle for longer than this starts gathering afresh.
GATHERING_STALE_HOURS = env_int("GATHERING_STALE_HOURS", 24)
# Turn engine: messages of history shown to the model, rejected tool calls
# tolerated before the fallback reply, passages per document search.
TURN_HISTORY_MESSAGES = env_int("TURN_HISTORY_MESSAGES", 20)
TURN_MAX_RETRIES = env_int("TURN_MAX_RETRIES", 2)
TURN_KNOWLEDGE_HITS = env_int("TURN_KNOWLEDGE_HITS", 4)
# An open issue at the same property within this window whose title or description
# alone is at least this similar (pg_trgm) to the new report, and whose location (when
# both have one) is at least the second figure similar, is a duplicate: new details are
# added to it. The same room alone never merges two problems.
ISSUE_DUPLICATE_WINDOW_DAYS = env_int("ISSUE_DUPLICATE_WINDOW_DAYS", 14)
ISSUE_DUPLICATE_MIN_SIMILARITY = env_float("ISSUE_DUPLICATE_MIN_SIMILARITY", 0.45)
ISSUE_DUPLICATE_MIN_LOCATION_SIMILARITY = env_float("ISSUE_DUPLICATE_MIN_LOCATION_SIMILARITY", 0.3)
# Pretend thinking time of the scripted model (load benchmarks).
SCRIPTED_MODEL_DELAY_MS = env_int("SCRIPTED_MODEL_DELAY_MS", 0)

# --- Emergencies --------------------------------------------------------------

# Stage 2 of detection, after the keyword rules: the trained classifier
# (docs/emergencies.md). "e5" loads the committed artefact with the offline E5
# embedding, once per process; "off" leaves the rules alone. If it cannot load,
# the rules still run and /healthz says "emergency_classifier": "unavailable".
EMERGENCY_CLASSIFIER = env("EMERGENCY_CLASSIFIER", "e5")
if EMERGENCY_CLASSIFIER not in ("e5", "off"):
    raise ImproperlyConfigured(f"EMERGENCY_CLASSIFIER={EMERGENCY_CLASSIFIER!r}: expected e5 or off")
EMERGENCY_CLASSIFIER_PATH = env(
    "EMERGENCY_CLASSIFIER_PATH", str(BASE_DIR / "emergencies" / "artefacts" / "classifier.json")
)

# Model checks of a keyword alert: tries after the first, and the first backoff (doubling).
EMERGENCY_VALIDATION_MAX_RETRIES = env_int("EMERGENCY_VALIDATION_MAX_RETRIES", 3)
EMERGENCY_VALIDATION_RETRY_BACKOFF_SECONDS = env_int("EMERGENCY_VALIDATION_RETRY_BACKOFF_SECONDS", 10)
# Alerts still pending (or not emailed) after this long are queued again by the sweeper.
EMERGENCY_SWEEP_GRACE_SECONDS = env_int("EMERGENCY_SWEEP_GRACE_SECONDS", 300)
# A lost model check older than this is not run again: it would read the conversation as it is now, not as it
# was, and a late "false alarm" would stand an emergency down hours later. It stays pending (an emergency).
EMERGENCY_VALIDATE_MAX_AGE_HOURS = env_int("EMERGENCY_VALIDATE_MAX_AGE_HOURS", 6)
# Another keyword hit of the same category within this window gets the safety
# reply again but raises no new alert.
EMERGENCY_REALERT_MINUTES = env_int("EMERGENCY_REALERT_MINUTES", 30)
# An organization's own pattern rule may search one message for this long; past
# it the rule is skipped for that message and logged (a pattern that backtracks
# for ever must not hold up the workers every organization shares).
EMERGENCY_OWN_PATTERN_TIMEOUT_MS = env_int("EMERGENCY_OWN_PATTERN_TIMEOUT_MS", 50)
# Inbound messages the emergency worker has not screened this long after
# arrival (worker down, task lost) are screened by the sweeper, which runs
# every EMERGENCY_SWEEP_INTERVAL_SECONDS; older than the window, they are left.
EMERGENCY_SCREEN_GRACE_SECONDS = env_int("EMERGENCY_SCREEN_GRACE_SECONDS", 10)
EMERGENCY_SCREEN_WINDOW_HOURS = env_int("EMERGENCY_SCREEN_WINDOW_HOURS", 24)
EMERGENCY_SWEEP_INTERVAL_SECONDS = env_int("EMERGENCY_SWEEP_INTERVAL_SECONDS", 15)
CELERY_BEAT_SCHEDULE["emergency-sweep"] = {"task": tasks.EMERGENCY_SWEEP, "schedule": EMERGENCY_SWEEP_INTERVAL_SECONDS}

# --- Evaluations ------------------------------------------------------------

# Scheduled tiers 2 and 3 (Celery beat): retrieval quality weekly (Monday 03:00
# UTC), the LLM judge monthly (1st, 04:00 UTC) on EVAL_JUDGE_SAMPLE conversations.
EVAL_SCHEDULE_ENABLED = env_bool("EVAL_SCHEDULE_ENABLED", False)
EVAL_JUDGE_SAMPLE = env_int("EVAL_JUDGE_SAMPLE", 50)
if EVAL_SCHEDULE_ENABLED:
    from celery.schedules import crontab

    CELERY_BEAT_SCHEDULE["evals-retrieval-weekly"] = {
        "task": tasks.EVALS_RETRIEVAL,
        "schedule": crontab(minute=0, hour=3, day_of_week=1),
    }
    CELERY_BEAT_SCHEDULE["evals-judge-monthly"] = {
        "task": tasks.EVALS_JUDGE,
        "schedule": crontab(minute=0, hour=4, day_of_month=1),
    }

# --- Retrieval --------------------------------------------------------------

# Embedding model (retrieval/embeddings.py): "e5-multilingual" (multilingual-e5-small,
# the default: tenants write in five languages) or "minilm" (all-MiniLM-L6-v2, English
# only). Both are offline, 384 dimensions; the measurements that chose: docs/retrieval.md.
# After changing it run `manage.py reembed_documents` (vectors of two models never mix).
EMBEDDING_BACKEND = env("EMBEDDING_BACKEND", "e5-multilingual")
EMBEDDING_DIMENSIONS = 384
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 32)
# Threads each process's E5 engine may use (retrieval and the emergency classifier).
# 1 by default, like OPENBLAS_NUM_THREADS: the processes are the parallelism (Celery's
# prefork children, the queues' workers), and engines spinning on every core each
# fight over them: two processes at once embedded a query in 41-44 ms p50 and
# 155-171 ms p95 with every core, 24-26 / 42-44 with one
# (benchmarks/embedding_threads.py). 0 lets the engine take every core, the faster
# choice for one process alone (13 / 22 ms), such as a training command.
EMBEDDING_THREADS = env_int("EMBEDDING_THREADS", 1)
if EMBEDDING_THREADS < 0:
    raise ImproperlyConfigured(f"EMBEDDING_THREADS must be 0 (every core) or more, not {EMBEDDING_THREADS}")
# Chunk size in the embedding model's own tokens, title and headings included
# (capped at what the model reads), and the overlap between chunks of one section.
# Chosen with benchmarks/retrieval_chunk_sizes.py; the numbers are in docs/retrieval.md.
CHUNK_MAX_TOKENS = env_int("CHUNK_MAX_TOKENS", 256)
CHUNK_OVERLAP_TOKENS = env_int("CHUNK_OVERLAP_TOKENS", 32)
# Hybrid search (retrieval/search.py): weighted Reciprocal Rank Fusion,
# score = w_vector / (k + vector_rank) + w_keyword / (k + keyword_rank).
# Tuned with `manage.py eval_retrieval --sweep`; the numbers are in docs/retrieval.md.
SEARCH_RRF_K = env_int("SEARCH_RRF_K", 5)
SEARCH_VECTOR_WEIGHT = env_float("SEARCH_VECTOR_WEIGHT", 0.7)
SEARCH_KEYWORD_WEIGHT = env_float("SEARCH_KEYWORD_WEIGHT", 0.3)
SEARCH_VECTOR_CANDIDATES = env_int("SEARCH_VECTOR_CANDIDATES", 20)
SEARCH_KEYWORD_CANDIDATES = env_int("SEARCH_KEYWORD_CANDIDATES", 20)
# HNSW candidate list (pgvector hnsw.ef_search); must be >= SEARCH_VECTOR_CANDIDATES. Only
# scopes above SEARCH_EXACT_SCAN_MAX_CHUNKS walk HNSW: on an organization's own index, recall@20
# 0.905 at 64, 0.952 at 200, 0.977 at 400 for about 1 ms more (docs/benchmarks.md).
SEARCH_HNSW_EF_SEARCH = env_int("SEARCH_HNSW_EF_SEARCH", 400)
# A tenant's scope of at most this many chunks is scanned exactly instead of through HNSW
# (exact results; about 2-3 us a chunk once vectors are stored in the row, docs/benchmarks.md).
SEARCH_EXACT_SCAN_MAX_CHUNKS = env_int("SEARCH_EXACT_SCAN_MAX_CHUNKS", 5000)
# An organization with at least this many chunks gets an HNSW index of its own
# (retrieval/partial_indexes.py), kept in step by beat every SEARCH_PARTIAL_INDEX_SYNC_SECONDS
# and by `manage.py retrieval_partial_indexes`; 0 turns them off (and drops them). Only a
# scope above SEARCH_EXACT_SCAN_MAX_CHUNKS walks HNSW, so by default the two are the same.
SEARCH_PARTIAL_INDEX_MIN_CHUNKS = env_int("SEARCH_PARTIAL_INDEX_MIN_CHUNKS", SEARCH_EXACT_SCAN_MAX_CHUNKS)
SEARCH_PARTIAL_INDEX_SYNC_SECONDS = env_int("SEARCH_PARTIAL_INDEX_SYNC_SECONDS", 3600)
CELERY_BEAT_SCHEDULE["retrieval-partial-indexes-sync"] = {
    "task": tasks.RETRIEVAL_PARTIAL_INDEXES_SYNC,
    "schedule": float(SEARCH_PARTIAL_INDEX_SYNC_SECONDS),
}
# The keyword leg matches the words on a scope of at most this many chunks itself;
# a larger one asks the word index (chunk_search_words).
SEARCH_KEYWORD_SCAN_MAX_CHUNKS = env_int("SEARCH_KEYWORD_SCAN_MAX_CHUNKS", 1000)
# There it skips the vocabulary words that more than this share of the scope's count
# of chunks in the organization hold (1.0 keeps every word; docs/retrieval.md).
SEARCH_KEYWORD_MAX_DF_SHARE = env_float("SEARCH_KEYWORD_MAX_DF_SHARE", 0.1)
# A larger scope walks HNSW with pgvector's iterative scan (relaxed_order or strict_order),
# which stops after SEARCH_HNSW_MAX_SCAN_TUPLES index tuples.
SEARCH_HNSW_ITERATIVE_SCAN = env("SEARCH_HNSW_ITERATIVE_SCAN", "relaxed_order")
SEARCH_HNSW_MAX_SCAN_TUPLES = env_int("SEARCH_HNSW_MAX_SCAN_TUPLES", 20000)
# Keyword leg: a query word matches a vocabulary word when their pg_trgm
# similarity reaches this (typos: "presure" ~ "pressure" 0.7), taking at most
# SEARCH_WORDS_PER_TERM closest words per query word.
SEARCH_TRGM_THRESHOLD = env_float("SEARCH_TRGM_THRESHOLD", 0.4)
SEARCH_WORDS_PER_TERM = env_int("SEARCH_WORDS_PER_TERM", 3)
# Answerability (retrieval/answerability.py): the trained head says whether a passage
# answers; below its operating point (chosen on the dev split and kept in its artefact)
# the model is told the documents do not answer. SEARCH_ANSWERABLE_MIN_PROBABILITY, when
# set, replaces that operating point. Where the head does not apply (an embedding model
# it was not trained on), the best passage's cosine similarity decides instead:
# SEARCH_ANSWER_MIN_SIMILARITY, on each model's own scale (0.80 chosen for E5 on dev;
# for another model off, 0, until measured). docs/retrieval.md has the figures.
SEARCH_ANSWERABLE_MIN_PROBABILITY: float | None = (
    env_float("SEARCH_ANSWERABLE_MIN_PROBABILITY", 0.0) if os.environ.get("SEARCH_ANSWERABLE_MIN_PROBABILITY") else None
)
SEARCH_ANSWER_MIN_SIMILARITY = env_float(
    "SEARCH_ANSWER_MIN_SIMILARITY", 0.80 if EMBEDDING_BACKEND == "e5-multilingual" else 0.0
)
# Documents still waiting for their embedding task this long are queued again (beat).
EMBEDDING_REQUEUE_AFTER_SECONDS = env_int("EMBEDDING_REQUEUE_AFTER_SECONDS", 900)
CELERY_BEAT_SCHEDULE["retrieval-requeue-pending"] = {
    "task": tasks.RETRIEVAL_REQUEUE_PENDING,
    "schedule": float(env_int("EMBEDDING_REQUEUE_INTERVAL_SECONDS", 300)),
}

# --- Data protection (privacy/, docs/data-protection.md) ---------------------

# Retention (privacy/retention.py): each organization's RetentionPolicy, applied
# daily by beat; an organization without a policy keeps everything (the landlord
# decides how long; the product never deletes on its own default).
PRIVACY_RETENTION_INTERVAL_SECONDS = env_int("PRIVACY_RETENTION_INTERVAL_SECONDS", 24 * 3600)
# Messages to a number no organization owns (unrouted: nobody's record, no
# policy reaches them) are deleted by the same run once this many days old; 0 keeps them.
UNROUTED_MESSAGE_RETENTION_DAYS = env_int("UNROUTED_MESSAGE_RETENTION_DAYS", 30)
# Files under the media folder that no row names (a deletion lost to a crash
# or a storage error) are deleted with the retention run once this old.
MEDIA_ORPHAN_GRACE_HOURS = env_int("MEDIA_ORPHAN_GRACE_HOURS", 24)
CELERY_BEAT_SCHEDULE["privacy-retention"] = {
    "task": tasks.PRIVACY_RETENTION_APPLY,
    "schedule": float(PRIVACY_RETENTION_INTERVAL_SECONDS),
}
# Deadline clocks (issues/deadlines.py): beat warns the manager once before a
# clock runs out (each policy's warn_before_hours) and once when it is missed.
DEADLINE_CHECK_INTERVAL_SECONDS = env_int("DEADLINE_CHECK_INTERVAL_SECONDS", 300)
CELERY_BEAT_SCHEDULE["deadline-clocks"] = {
    "task": tasks.DEADLINE_CLOCKS_CHECK,
    "schedule": float(DEADLINE_CHECK_INTERVAL_SECONDS),
}
# "Is it fixed?" (issues/fix_check.py): a resolved issue whose tenant does not
# answer in this many days is closed by beat (checked every hour).
ISSUE_FIX_CLOSE_DAYS = env_int("ISSUE_FIX_CLOSE_DAYS", 7)
CELERY_BEAT_SCHEDULE["issues-fix-unanswered-close"] = {"task": tasks.ISSUE_FIX_UNANSWERED_CLOSE, "schedule": 3600.0}
# Dispatch (issues/dispatch.py): a contractor has this long to accept or
# decline a job before it goes back to the landlord (beat checks every 5 minutes).
# The hours count only from DISPATCH_DAY_STARTS_HOUR to DISPATCH_DAY_ENDS_HOUR
# in the organization's time zone (an emergency's in calendar hours).
DISPATCH_RESPONSE_HOURS = env_int("DISPATCH_RESPONSE_HOURS", 4)
DISPATCH_DAY_STARTS_HOUR = env_int("DISPATCH_DAY_STARTS_HOUR", 8)
DISPATCH_DAY_ENDS_HOUR = env_int("DISPATCH_DAY_ENDS_HOUR", 20)
CELERY_BEAT_SCHEDULE["issues-jobs-expire"] = {"task": tasks.DISPATCH_JOBS_EXPIRE, "schedule": 300.0}
# An organization with auto_dispatch on offers a routine or urgent issue to
# the best-placed contractor, then to the next after a decline or lapse, at
# most this many offers per issue before it waits for a person.
DISPATCH_AUTO_MAX_OFFERS = env_int("DISPATCH_AUTO_MAX_OFFERS", 3)
# Booking the visit (issues/appointments.py): the contractor is listed this
# many half-day windows from their working hours (WhatsApp lists show 10 rows,
# one is "Send"), over about this many working days, and proposes up to
# APPOINTMENT_SLOTS_MAX; a typed time is a window of APPOINTMENT_TYPED_HOURS,
# at most APPOINTMENT_HORIZON_DAYS ahead. Beat (every 5 minutes) reminds both
# sides APPOINTMENT_REMINDER_HOURS before, and asks whether it happened after.
# The .ics link sent over WhatsApp works for APPOINTMENT_LINK_DAYS.
APPOINTMENT_SLOTS_LISTED = env_int("APPOINTMENT_SLOTS_LISTED", 9)
APPOINTMENT_DAYS_AHEAD = env_int("APPOINTMENT_DAYS_AHEAD", 5)
APPOINTMENT_SLOTS_MAX = env_int("APPOINTMENT_SLOTS_MAX", 3)
APPOINTMENT_TYPED_HOURS = env_int("APPOINTMENT_TYPED_HOURS", 2)
APPOINTMENT_HORIZON_DAYS = env_int("APPOINTMENT_HORIZON_DAYS", 28)
APPOINTMENT_REMINDER_HOURS = env_int("APPOINTMENT_REMINDER_HOURS", 24)
# Neither side said whether a visit happened this many hours after being asked: the landlord is told once.
APPOINTMENT_UNANSWERED_HOURS = env_int("APPOINTMENT_UNANSWERED_HOURS", 24)
APPOINTMENT_LINK_DAYS = env_int("APPOINTMENT_LINK_DAYS", 60)
CELERY_BEAT_SCHEDULE["issues-appointments-check"] = {"task": tasks.APPOINTMENTS_CHECK, "schedule": 300.0}
# django-auditlog: model changes only of the fields each registration names
# (privacy/audit.py), never the tenant's words; no client IP kept.
AUDITLOG_DISABLE_REMOTE_ADDR = True

# --- Email (landlord notifications) -----------------------------------------

EMAIL_BACKEND = env("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", "repairs@localhost")

# --- Static and uploaded files ----------------------------------------------

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
MEDIA_URL = "media/"
MEDIA_ROOT = Path(env("MEDIA_ROOT", str(DATA_DIR / "media")))
STORAGES = {
    "default": {"BACKEND": env("FILE_STORAGE_BACKEND", "django.core.files.storage.FileSystemStorage")},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# --- API --------------------------------------------------------------------

# Knowledge document uploads (admin and API): PDF, plain text or Markdown up to this size;
# a PDF of at most DOCUMENT_PDF_MAX_PAGES pages (read in the request); at most
# DOCUMENT_TEXT_MAX_CHARS of text (about 2 minutes of the embeddings worker at 1 million).
DOCUMENT_UPLOAD_MAX_BYTES = env_int("DOCUMENT_UPLOAD_MAX_BYTES", 10 * 1024 * 1024)
DOCUMENT_PDF_MAX_PAGES = env_int("DOCUMENT_PDF_MAX_PAGES", 500)
DOCUMENT_TEXT_MAX_CHARS = env_int("DOCUMENT_TEXT_MAX_CHARS", 1_000_000)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["api.permissions.IsOrganizationMember"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "api.pagination.PagePagination",
    "DEFAULT_FILTER_BACKENDS": [
        "api.filtering.StrictFilterBackend",
        "api.ordering.StrictOrderingFilter",
    ],
    # API_THROTTLE_RATE / API_ANON_THROTTLE_RATE below; over the rate: 429 with Retry-After.
    "DEFAULT_THROTTLE_CLASSES": ["api.throttling.TokenRateThrottle"],
    "EXCEPTION_HANDLER": "api.errors.api_exception_handler",
    "PAGE_SIZE": env_int("API_PAGE_SIZE", 50),
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "api.renderers.BrowsableAPIWithoutFormsRenderer",  # its forms would list every organization's rows
    ],
}
API_MAX_PAGE_SIZE = env_int("API_MAX_PAGE_SIZE", 200)
# /api/schema/, /api/docs/ and /api/redoc/: open to anyone in development,
# closed in production (only a signed-in user or a token may read them) unless
# this says otherwise.
API_DOCS_PUBLIC = env_bool("API_DOCS_PUBLIC", not PRODUCTION)
# Requests per token (a signed-in session counts per user), and per client IP for
# callers without credentials, as DRF rates ("N/second|minute|hour|day"). They are
# counted in Redis (the "throttle" cache) so every web process shares the count;
# if Redis does not answer, requests pass rather than fail.
API_THROTTLE_RATE = env("API_THROTTLE_RATE", "3600/hour")
# The test suite makes many anonymous calls from one address; its own tests set a rate.
API_ANON_THROTTLE_RATE = env("API_ANON_THROTTLE_RATE", "100000/minute" if TESTING else "60/minute")
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "throttle": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        # Each test run counts apart from the others sharing this Redis.
        "KEY_PREFIX": f"throttle-test-{os.getpid()}" if TESTING else "throttle",
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Repairs API",
    "DESCRIPTION": "The landlord's API: issues, properties, tenants, tenancies, conversations and documents of the "
    "caller's organizations. Authenticate with `Authorization: Token <key>` (`manage.py api_token_create`).",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The documentation page works offline: Swagger UI and Redoc are served from
    # drf-spectacular-sidecar's static files, never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "IssueStatusEnum": "issues.models.Issue.Status",
        "MessageStatusEnum": "conversations.models.Message.Status",
        "DocumentStatusEnum": "retrieval.models.Document.Status",
        "IssueUpdateAuthorEnum": "issues.models.IssueUpdate.Author",
        "MessageAuthorEnum": "conversations.models.Message.Author",
        "RepairCategoryEnum": "properties.models.RepairCategory",
        "JobStateEnum": "issues.models.Job.State",
    },
}

# --- Locale and logging ------------------------------------------------------

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# gunicorn workers `make run` starts (`run_stack --web-workers` overrides it).
WEB_CONCURRENCY = env_int("WEB_CONCURRENCY", 2)

LOG_LEVEL = env("LOG_LEVEL", "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {"embedded_postgres": {"level": "WARNING"}},
}
