"""Settings, all read from environment variables (documented in README.md).

Development needs none of them: the database is an embedded PostgreSQL, Redis is
the local one, messages go to the console and the model is the scripted one.
``DJANGO_ENV=production`` refuses to start without its secrets.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


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
    value = os.environ.get(name)
    return int(value) if value else default


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value else default


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in env(name, default).split(",") if item.strip()]


TESTING = "pytest" in sys.modules
PRODUCTION = env("DJANGO_ENV", "development") == "production"

# --- Core -------------------------------------------------------------------

SECRET_KEY = env("DJANGO_SECRET_KEY")
if not SECRET_KEY:
    if PRODUCTION:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY is required when DJANGO_ENV=production")
    SECRET_KEY = "development-only-insecure-key"  # noqa: S105 - never used in production
DEBUG = env_bool("DJANGO_DEBUG", not PRODUCTION)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "" if PRODUCTION else "localhost,127.0.0.1,[::1],testserver")
if PRODUCTION and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS is required when DJANGO_ENV=production")
# The public base URL Twilio posts to (scheme and host, no trailing slash). The
# webhook signature is computed over it, never over the Host header.
PUBLIC_BASE_URL = env("PUBLIC_BASE_URL", "http://localhost:8000").rstrip("/")
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
    "drf_spectacular",
    "properties",
    "conversations",
    "retrieval",
    "orchestration",
    "evals",
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
]

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
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis and Celery -------------------------------------------------------

REDIS_URL = env("REDIS_URL", "redis://127.0.0.1:6379/0")
if TESTING and not env("CELERY_KEY_PREFIX"):
    # Each test run gets its own Celery keys in the shared Redis; the worker
    # processes the tests start inherit the prefix through the environment.
    os.environ["CELERY_KEY_PREFIX"] = f"test-{os.getpid()}:"
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = env_int("CELERY_WORKER_PREFETCH_MULTIPLIER", 1)
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A webhook must answer even when Redis is down: publishing gives up quickly
# and the sweeper re-queues what was stored.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # Several deployments (or test runs) can share one Redis without taking
    # each other's tasks.
    "global_keyprefix": env("CELERY_KEY_PREFIX", ""),
    "socket_connect_timeout": env_float("REDIS_CONNECT_TIMEOUT", 1.0),
    "socket_timeout": env_float("REDIS_SOCKET_TIMEOUT", 5.0),
    "max_retries": 1,
    # Must exceed the longest task (a turn with model retries) so Redis does
    # not hand an unacknowledged task to a second worker while the first runs.
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 600),
}
CELERY_BROKER_CONNECTION_MAX_RETRIES = 1
CELERY_TASK_PUBLISH_RETRY = False
CELERY_BEAT_SCHEDULE: dict = {}

# --- Channel: Twilio and WhatsApp -------------------------------------------

TWILIO_ACCOUNT_SID = env("TWILIO_ACCOUNT_SID")
TWILIO_AUTH_TOKEN = env("TWILIO_AUTH_TOKEN")
# Where the twilio SDK sends REST calls; tests point it at a local stub server.
TWILIO_API_BASE_URL = env("TWILIO_API_BASE_URL", "")
# Verify X-Twilio-Signature on every webhook. Only ever off in local tinkering.
TWILIO_VALIDATE_SIGNATURE = env_bool("TWILIO_VALIDATE_SIGNATURE", True)
WHATSAPP_SENDER = env("WHATSAPP_SENDER", "console")
if WHATSAPP_SENDER not in {"twilio", "console"}:
    raise ImproperlyConfigured("WHATSAPP_SENDER must be 'twilio' or 'console'")
if WHATSAPP_SENDER == "twilio" and not (TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN):
    raise ImproperlyConfigured("WHATSAPP_SENDER=twilio needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN")
if PRODUCTION and not TWILIO_AUTH_TOKEN:
    raise ImproperlyConfigured("TWILIO_AUTH_TOKEN is required when DJANGO_ENV=production")
# The sender's own WhatsApp number used for outbound messages when no
# Messaging Service is configured for the organization.
WHATSAPP_DEFAULT_FROM = env("WHATSAPP_DEFAULT_FROM", "")
# Messages from one tenant that arrive within this many seconds are answered as one turn.
INBOUND_COALESCE_SECONDS = env_float("INBOUND_COALESCE_SECONDS", 3.0)
# Inbound messages not processed after this many seconds are re-queued by the sweeper.
INBOUND_SWEEP_GRACE_SECONDS = env_int("INBOUND_SWEEP_GRACE_SECONDS", 60)
OUTBOUND_SWEEP_GRACE_SECONDS = env_int("OUTBOUND_SWEEP_GRACE_SECONDS", 120)
SWEEP_INTERVAL_SECONDS = env_int("SWEEP_INTERVAL_SECONDS", 30)
# Approved WhatsApp templates for messages outside the 24-hour window, per purpose:
# WHATSAPP_TEMPLATES="issue_update=HX...,generic=HX..."
WHATSAPP_TEMPLATES = dict(item.split("=", 1) for item in env_list("WHATSAPP_TEMPLATES"))
MEDIA_MAX_IMAGE_BYTES = env_int("MEDIA_MAX_IMAGE_BYTES", 5 * 1024 * 1024)
MEDIA_MAX_TOTAL_BYTES = env_int("MEDIA_MAX_TOTAL_BYTES", 16 * 1024 * 1024)

# --- The model --------------------------------------------------------------

ANTHROPIC_API_KEY = env("ANTHROPIC_API_KEY")
# Where the anthropic SDK sends requests; tests point it at a local stub server.
ANTHROPIC_BASE_URL = env("ANTHROPIC_BASE_URL", "")
LLM_BACKEND = env("LLM_BACKEND", "anthropic" if ANTHROPIC_API_KEY else "scripted")
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

# --- Retrieval --------------------------------------------------------------

EMBEDDING_BACKEND = env("EMBEDDING_BACKEND", "minilm")
EMBEDDING_DIMENSIONS = 384

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

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
}
SPECTACULAR_SETTINGS = {"TITLE": "Repairs API", "VERSION": "1.0.0", "SERVE_INCLUDE_SCHEMA": False}

# --- Locale and logging ------------------------------------------------------

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

LOG_LEVEL = env("LOG_LEVEL", "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {"embedded_postgres": {"level": "WARNING"}},
}
