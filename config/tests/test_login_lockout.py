"""Login lockout (django-axes): by username and by client IP, until reset."""

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import RequestFactory

from config.client_ip import client_ip

pytestmark = pytest.mark.django_db

PASSWORD = "the-right-one-42"


@pytest.fixture
def staff(db):
    return User.objects.create_user("owner", password=PASSWORD, is_staff=True, is_superuser=True)


def _login(client, username: str, password: str, ip: str = "203.0.113.7"):
    client.logout()
    return client.post("/admin/login/?next=/admin/", {"username": username, "password": password}, REMOTE_ADDR=ip)


def _logged_in(response) -> bool:
    return response.status_code == 302 and response.url == "/admin/"


def test_forty_wrong_passwords_then_the_right_one_is_refused_until_reset(client, staff):
    answers = [_login(client, "owner", f"guess-{n}").status_code for n in range(40)]
    assert answers[0] == 200  # the login form again, with its error
    assert answers[-1] == 429  # locked out long before the fortieth
    refused = _login(client, "owner", PASSWORD)
    assert refused.status_code == 429 and not _logged_in(refused)

    call_command("axes_reset")  # the runbook's unlock
    assert _logged_in(_login(client, "owner", PASSWORD))


def test_a_username_is_locked_whichever_address_the_guesses_come_from(client, staff, settings):
    for n in range(settings.AXES_FAILURE_LIMIT):
        _login(client, "owner", f"guess-{n}", ip=f"198.51.100.{n + 1}")
    assert _login(client, "owner", PASSWORD, ip="192.0.2.200").status_code == 429

    call_command("axes_reset_username", "owner")
    assert _logged_in(_login(client, "owner", PASSWORD, ip="192.0.2.200"))


def test_an_address_is_locked_whichever_usernames_it_tries(client, staff, settings):
    for n in range(settings.AXES_FAILURE_LIMIT):
        _login(client, f"someone-{n}", "guess", ip="203.0.113.9")
    assert _login(client, "owner", PASSWORD, ip="203.0.113.9").status_code == 429
    assert _logged_in(_login(client, "owner", PASSWORD, ip="203.0.113.10"))  # another address is not

    call_command("axes_reset_ip", "203.0.113.9")
    assert _logged_in(_login(client, "owner", PASSWORD, ip="203.0.113.9"))


def test_a_success_clears_the_earlier_failures(client, staff, settings):
    for _ in range(2):
        for n in range(settings.AXES_FAILURE_LIMIT - 1):
            _login(client, "owner", f"guess-{n}")
        assert _logged_in(_login(client, "owner", PASSWORD))


def test_the_client_address_behind_trusted_proxies(settings):
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.5")
    settings.TRUSTED_PROXY_COUNT = 0
    assert client_ip(request) == "10.0.0.2"  # no proxy trusted: the header is the client's own say
    settings.TRUSTED_PROXY_COUNT = 1
    assert client_ip(request) == "198.51.100.5"  # what our proxy saw, not the forged left entry
    settings.TRUSTED_PROXY_COUNT = 3
    assert client_ip(request) == "10.0.0.2"  # fewer hops than trusted: fall back
