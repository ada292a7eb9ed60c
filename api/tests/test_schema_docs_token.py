"""The OpenAPI schema, the offline documentation page, and the token command."""

import io

import pytest
import yaml
from django.contrib.staticfiles import finders
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token

from api.tests.conftest import token_client
from properties.tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PATHS = [
    "/api/v1/issues/",
    "/api/v1/issues/{id}/",
    "/api/v1/issues/{id}/link-number/",
    "/api/v1/issues/{id}/clocks/{kind}/met/",
    "/api/v1/issues/{id}/dispatch/",
    "/api/v1/issues/{id}/dispatch/withdraw/",
    "/api/v1/issues/{id}/summary/",
    "/api/v1/issues/export.csv",
    "/api/v1/contractors/",
    "/api/v1/contractors/{id}/",
    "/api/v1/properties/",
    "/api/v1/properties/{id}/",
    "/api/v1/tenants/",
    "/api/v1/tenants/{id}/",
    "/api/v1/tenants/{id}/export/",
    "/api/v1/tenants/{id}/erase/",
    "/api/v1/data-requests/",
    "/api/v1/data-requests/{id}/decide/",
    "/api/v1/audit-events/",
    "/api/v1/tenancies/",
    "/api/v1/tenancies/{id}/",
    "/api/v1/conversations/",
    "/api/v1/conversations/{id}/",
    "/api/v1/conversations/{id}/messages/",
    "/api/v1/documents/",
    "/api/v1/documents/{id}/",
]


def test_schema_lists_every_endpoint_with_named_components(client):
    response = client.get("/api/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    assert set(schema["paths"]) == set(PATHS)  # and no catch-all 404 route
    assert "patch" in schema["paths"]["/api/v1/issues/{id}/"]
    components = schema["components"]["schemas"]
    assert {
        "Issue",
        "IssueDetail",
        "PatchedIssueStatusChange",
        "PaginatedIssueList",
        "Message",
        "DocumentUpload",
    } <= set(components)
    assert "tokenAuth" in schema["components"]["securitySchemes"]


def test_schema_generation_has_no_warnings():
    out, err = io.StringIO(), io.StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", stdout=out, stderr=err)
    assert "openapi" in out.getvalue()


@pytest.mark.parametrize(("url", "asset"), [("/api/docs/", "swagger-ui-dist"), ("/api/redoc/", "redoc")])
def test_documentation_pages_load_their_assets_locally(client, url, asset):
    html = client.get(url).content.decode()
    assert "cdn." not in html and "unpkg" not in html and "jsdelivr" not in html
    assert f"/static/drf_spectacular_sidecar/{asset}/" in html
    if asset == "swagger-ui-dist":
        assert finders.find("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
    else:
        assert finders.find("drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js")


def test_browsable_api_works_for_a_logged_in_landlord(client, worlds):
    alice, _ = worlds
    client.force_login(alice.user)
    response = client.get("/api/v1/issues/", HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    assert alice.emergency.reference in response.content.decode()


def test_token_command_creates_shows_and_rotates(worlds):
    alice, _ = worlds
    out = io.StringIO()
    call_command("api_token_create", "alice", stdout=out, stderr=io.StringIO())
    key = out.getvalue().strip()
    assert Token.objects.get(user=alice.user).key == key
    assert token_client(alice.user).get("/api/v1/issues/").status_code == 200

    out = io.StringIO()
    call_command("api_token_create", "alice", stdout=out, stderr=io.StringIO())
    assert out.getvalue().strip() == key
    out = io.StringIO()
    call_command("api_token_create", "alice", "--rotate", stdout=out, stderr=io.StringIO())
    assert out.getvalue().strip() != key
    assert not Token.objects.filter(key=key).exists()


def test_token_command_refuses_unknown_users_and_non_members(worlds):
    with pytest.raises(CommandError, match="No user called"):
        call_command("api_token_create", "nobody")
    UserFactory(username="drifter")
    with pytest.raises(CommandError, match="not a member of any organization"):
        call_command("api_token_create", "drifter")
    assert not Token.objects.exists()
