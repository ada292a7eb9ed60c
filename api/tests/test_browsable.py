"""The browsable API (HTML, for a signed-in user or a token) shows one
organization's data only: it draws no forms, whose related fields would list
every organization's rows as choices."""

import pytest

pytestmark = pytest.mark.django_db

ENDPOINTS = ["/api/v1/documents/", "/api/v1/properties/", "/api/v1/tenants/", "/api/v1/contractors/"]


@pytest.mark.parametrize("path", ENDPOINTS)
def test_another_organizations_names_and_addresses_are_not_in_the_page(alice_api, worlds, path):
    alice, bob = worlds
    response = alice_api.get(path, {"format": "api"})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    if path == "/api/v1/properties/":
        assert alice.property.code in page  # the caller's own rows are shown
    assert bob.organization.name not in page
    assert bob.property.address not in page and bob.property.code not in page
