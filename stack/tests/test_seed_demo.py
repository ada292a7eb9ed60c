import io
import re

import pytest
from django.core.management import call_command

from properties.models import Membership, Organization, Property, Tenancy, Tenant, WhatsAppNumber
from stack.demo import DEMO_LANDLORD_PASSWORD, demo_password

pytestmark = pytest.mark.django_db

MODELS = [Organization, WhatsAppNumber, Property, Tenant, Tenancy, Membership]


def _snapshot():
    return {model.__name__: sorted(model.objects.values_list("pk", flat=True)) for model in MODELS}


def test_seed_demo_is_idempotent():
    call_command("seed_demo")
    first = _snapshot()
    assert len(first["Property"]) == 2
    assert len(first["Tenancy"]) >= 3
    call_command("seed_demo")
    assert _snapshot() == first


def _seed(*args: str) -> str:
    out = io.StringIO()
    call_command("seed_demo", *args, stdout=out)
    match = re.search(r"Admin login: landlord / (\S+)", out.getvalue())
    assert match, out.getvalue()
    return match.group(1)


def _admin_login(client, password: str) -> bool:
    client.logout()
    response = client.post("/admin/login/?next=/admin/", {"username": "landlord", "password": password})
    return response.status_code == 302 and response.url == "/admin/"


def test_seed_demo_prints_a_random_password_that_works_and_the_known_one_does_not(client):
    first = _seed()
    second = _seed()
    assert first != second and DEMO_LANDLORD_PASSWORD not in (first, second)
    assert len(first) >= 16
    assert _admin_login(client, second)
    assert not _admin_login(client, DEMO_LANDLORD_PASSWORD)
    assert not _admin_login(client, first)  # each run replaces the last one's


def test_only_the_demo_uses_the_fixed_password(client):
    assert _seed("--fixed-password") == DEMO_LANDLORD_PASSWORD
    assert _admin_login(client, DEMO_LANDLORD_PASSWORD)
    assert demo_password(fixed=True) == DEMO_LANDLORD_PASSWORD
    assert demo_password(fixed=False) != DEMO_LANDLORD_PASSWORD
