"""Every API failure has the one error body, also for paths that name no
endpoint and for server errors."""

import pytest
from django.test import Client

from api.errors import server_error

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", "/api/v1/isues/"), ("post", "/api/v1/issues"), ("patch", "/api/v1/issues/1/photos/")],
)
def test_an_unknown_endpoint_is_a_json_404(alice_api, method, path):
    response = getattr(alice_api, method)(path)
    assert response.status_code == 404
    assert response.json() == {"error": {"status": 404, "code": "not_found", "message": "No such API endpoint."}}


def test_a_server_error_under_the_api_is_the_api_error_body(rf):
    response = server_error(rf.get("/api/v1/issues/"))
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert b'"code": "server_error"' in response.content


def test_a_server_error_elsewhere_is_djangos_page(rf):
    response = server_error(rf.get("/admin/"))
    assert response.status_code == 500
    assert response["Content-Type"].startswith("text/html")


def test_the_known_endpoints_still_answer(alice_api):
    assert alice_api.get("/api/v1/issues/").status_code == 200
    assert Client().get("/api/v1/issues/").status_code == 401
