"""``BIND``, where ``make run`` listens: the address clients on this machine
use, and in development the public URL the webhook's signature is checked
against unless ``PUBLIC_BASE_URL`` says otherwise."""

import os
import subprocess
import sys

import pytest
from django.conf import settings

from config.bind import local_base_url


@pytest.mark.parametrize(
    ("bind", "url"),
    [
        ("127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("0.0.0.0:8001", "http://127.0.0.1:8001"),  # every interface: reached on loopback
        (":8002", "http://127.0.0.1:8002"),
        ("[::]:8003", "http://[::1]:8003"),
        ("[::1]:8004", "http://[::1]:8004"),
        ("localhost", "http://localhost:8000"),  # gunicorn's default port
        ("repairs.internal:9000", "http://repairs.internal:9000"),
    ],
)
def test_local_base_url_is_where_a_client_on_this_machine_reaches_bind(bind, url):
    assert local_base_url(bind) == url


def _development_settings(**environ: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"BIND", "PUBLIC_BASE_URL", "DJANGO_ENV", "ALLOWED_HOSTS"}}
    # A URL that is never connected to: settings alone must not start the embedded server.
    env.update(DATABASE_URL="postgres://repairs@127.0.0.1:1/repairs", **environ)
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.BIND, s.PUBLIC_BASE_URL, s.CSRF_TRUSTED_ORIGINS[0], ','.join(s.ALLOWED_HOSTS))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    bind, public, csrf, hosts = result.stdout.split()
    return {"BIND": bind, "PUBLIC_BASE_URL": public, "CSRF_TRUSTED_ORIGINS": csrf, "ALLOWED_HOSTS": hosts}


def test_in_development_the_public_url_follows_bind():
    assert _development_settings()["PUBLIC_BASE_URL"] == "http://127.0.0.1:8000"
    assert _development_settings(BIND="0.0.0.0:8123") == {
        "BIND": "0.0.0.0:8123",
        "PUBLIC_BASE_URL": "http://127.0.0.1:8123",
        "CSRF_TRUSTED_ORIGINS": "http://127.0.0.1:8123",
        "ALLOWED_HOSTS": "localhost,127.0.0.1,[::1],testserver",
    }


def test_a_public_base_url_that_is_set_wins_over_bind():
    configured = _development_settings(BIND="127.0.0.1:8123", PUBLIC_BASE_URL="https://abc.ngrok.app/")
    assert configured["PUBLIC_BASE_URL"] == "https://abc.ngrok.app"
    # The tunnel's host is allowed without naming it twice; ALLOWED_HOSTS, when set, decides alone.
    assert configured["ALLOWED_HOSTS"].split(",")[-1] == "abc.ngrok.app"
    assert (
        _development_settings(PUBLIC_BASE_URL="https://abc.ngrok.app", ALLOWED_HOSTS="a.example")["ALLOWED_HOSTS"]
        == "a.example"
    )
