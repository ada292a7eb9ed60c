"""Rate limits per token (429 with Retry-After), and who may read the API's docs."""

import os
import subprocess
import sys
from unittest import mock

import pytest
import redis
from django.conf import settings
from django.core.cache import caches
from rest_framework.test import APIClient

from api.tests.conftest import token_client
from config.tests.test_settings import PRODUCTION

pytestmark = pytest.mark.django_db


def test_a_token_over_its_rate_gets_429_with_retry_after_and_others_are_not_affected(worlds, settings):
    settings.API_THROTTLE_RATE = "3/minute"
    alice, bob = token_client(worlds[0].user), token_client(worlds[1].user)
    assert [alice.get("/api/v1/issues/").status_code for _ in range(3)] == [200, 200, 200]
    over = alice.get("/api/v1/issues/")
    assert over.status_code == 429
    assert 0 < int(over["Retry-After"]) <= 60
    assert over.json()["error"]["code"] == "throttled"
    assert bob.get("/api/v1/issues/").status_code == 200  # each token has its own budget


def test_callers_without_credentials_are_limited_per_address(settings):
    settings.API_ANON_THROTTLE_RATE = "2/minute"
    settings.API_DOCS_PUBLIC = True  # the one API resource open without credentials
    client = APIClient(REMOTE_ADDR="198.51.100.77")
    assert [client.get("/api/schema/").status_code for _ in range(2)] == [200, 200]
    assert client.get("/api/schema/", HTTP_X_FORWARDED_FOR="203.0.113.1").status_code == 429  # not evaded
    assert APIClient(REMOTE_ADDR="198.51.100.78").get("/api/schema/").status_code == 200


def test_the_api_still_answers_when_the_throttle_store_is_down(worlds, settings):
    settings.API_THROTTLE_RATE = "1/minute"
    alice = token_client(worlds[0].user)
    with mock.patch.object(caches["throttle"], "get", side_effect=redis.ConnectionError("down")):
        assert [alice.get("/api/v1/issues/").status_code for _ in range(3)] == [200, 200, 200]


DOCS = ["/api/schema/", "/api/docs/", "/api/redoc/"]


@pytest.mark.parametrize("url", DOCS)
def test_docs_are_public_when_the_setting_says_so(client, settings, url):
    settings.API_DOCS_PUBLIC = True
    assert client.get(url).status_code == 200


@pytest.mark.parametrize("url", DOCS)
def test_docs_are_closed_to_strangers_when_the_production_setting_says_so(worlds, client, settings, url):
    settings.API_DOCS_PUBLIC = False
    assert client.get(url).status_code in {401, 403}
    assert token_client(worlds[0].user).get(url).status_code == 200  # a landlord's token still reads them
    client.force_login(worlds[0].user)
    assert client.get(url).status_code == 200  # and so does a signed-in session


@pytest.mark.parametrize(("overrides", "public"), [({}, "False"), ({"API_DOCS_PUBLIC": "true"}, "True")])
def test_docs_are_closed_by_default_in_production(overrides, public):
    env = {k: v for k, v in os.environ.items() if k not in PRODUCTION and k != "API_DOCS_PUBLIC"}
    env.update({**PRODUCTION, **overrides})
    code = "import django; django.setup(); from django.conf import settings; print(settings.API_DOCS_PUBLIC)"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == public, result.stderr[-2000:]
