import pytest
from django.core.management import call_command

from properties.models import Membership, Organization, Property, Tenancy, Tenant, WhatsAppNumber

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
