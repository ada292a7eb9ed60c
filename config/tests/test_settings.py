"""Production mode refuses to start without what it needs, naming it; any
setting that does not parse stops the start naming the variable."""

import os
import re
import subprocess
import sys

import pytest
from django.conf import settings

PRODUCTION = {
    "DJANGO_ENV": "production",
    "DJANGO_SECRET_KEY": "a-real-secret",
    "DATABASE_URL": "postgres://repairs:secret@db.internal:5432/repairs",
    "ALLOWED_HOSTS": "repairs.example.com",
    "PUBLIC_BASE_URL": "https://repairs.example.com",
    "TWILIO_ACCOUNT_SID": "AC" + "1" * 32,
    "TWILIO_AUTH_TOKEN": "a-real-token",
    "WHATSAPP_SENDER": "twilio",
    "ANTHROPIC_API_KEY": "sk-ant-real",
    "LLM_BACKEND": "anthropic",
}


def django_setup(**overrides: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in PRODUCTION and k != "TWILIO_VALIDATE_SIGNATURE"}
    env.update({k: v for k, v in {**PRODUCTION, **overrides}.items() if v is not None})
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_production_starts_with_everything_set():
    result = django_setup()
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "missing",
    ["DJANGO_SECRET_KEY", "DATABASE_URL", "ALLOWED_HOSTS", "PUBLIC_BASE_URL", "TWILIO_AUTH_TOKEN", "ANTHROPIC_API_KEY"],
)
def test_production_refuses_to_start_without(missing):
    result = django_setup(**{missing: None})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert missing in result.stderr


def test_production_sends_through_twilio_and_asks_claude_unless_told_otherwise():
    result = django_setup(WHATSAPP_SENDER=None, TWILIO_ACCOUNT_SID=None)
    assert "WHATSAPP_SENDER=twilio needs TWILIO_ACCOUNT_SID" in result.stderr
    result = django_setup(LLM_BACKEND=None, ANTHROPIC_API_KEY=None)
    assert "LLM_BACKEND=anthropic needs ANTHROPIC_API_KEY" in result.stderr


def test_production_refuses_unsigned_webhooks():
    result = django_setup(TWILIO_VALIDATE_SIGNATURE="false")
    assert result.returncode != 0
    assert "TWILIO_VALIDATE_SIGNATURE" in result.stderr


def test_the_docker_build_sets_what_production_needs_for_collectstatic():
    dockerfile = (settings.BASE_DIR / "docker" / "Dockerfile").read_text()
    run = re.search(r"RUN ((?:\w+=\S+\s+(?:\\\s+)?)+)python manage\.py collectstatic", dockerfile)
    assert run, "the Dockerfile no longer runs collectstatic with a build environment"
    build_env = dict(pair.split("=", 1) for pair in re.findall(r"\w+=\S+", run.group(1)))
    result = django_setup(**{**dict.fromkeys(PRODUCTION), "DJANGO_ENV": "production", **build_env})
    assert result.returncode == 0, result.stderr


def test_an_unknown_django_env_refuses_to_start_naming_it():
    result = django_setup(DJANGO_ENV="prod")
    assert result.returncode != 0
    assert "ImproperlyConfigured: DJANGO_ENV must be development or production, not 'prod'" in result.stderr


def test_development_is_named_or_left_unset():
    for value in ("development", None):
        result = django_setup(DJANGO_ENV=value)
        assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"DJANGO_DEBUG": "true"}, "DJANGO_DEBUG must be off when DJANGO_ENV=production"),
        ({"DJANGO_SECRET_KEY": "development-only-insecure-key"}, "DJANGO_SECRET_KEY is the public development key"),
    ],
)
def test_production_refuses_debug_and_the_development_key(overrides, named):
    result = django_setup(**overrides)
    assert result.returncode != 0
    assert named in result.stderr


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("LOGIN_LOCKOUT_MINUTES", "30m", "LOGIN_LOCKOUT_MINUTES must be a whole number, not '30m'"),
        ("INBOUND_COALESCE_SECONDS", "3s", "INBOUND_COALESCE_SECONDS must be a number, not '3s'"),
        (
            "WHATSAPP_TEMPLATES",
            "issue_update=HX1,generic",
            "WHATSAPP_TEMPLATES takes comma-separated name=value items, not 'generic'",
        ),
        ("EMBEDDING_THREADS", "-2", "EMBEDDING_THREADS must be 0 (every core) or more, not -2"),
    ],
)
def test_a_setting_that_does_not_parse_names_the_variable_and_the_value(name, value, message):
    result = django_setup(**{name: value})
    assert result.returncode != 0
    assert f"ImproperlyConfigured: {message}" in result.stderr
