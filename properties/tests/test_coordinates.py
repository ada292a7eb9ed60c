"""Property coordinates: checked in the admin, the API and the CSV import, and
the nearest home to a location pin (haversine in PostgreSQL)."""

from __future__ import annotations

from decimal import Decimal
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from api.tests.conftest import token_client
from properties.location import coordinates_clean, distance_metres, properties_near, property_nearest
from properties.models import Property
from properties.tests.factories import MembershipFactory, OrganizationFactory, PropertyFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("latitude", "longitude", "field"),
    [
        ("91", "0", "latitude"),
        ("0", "-180.5", "longitude"),
        ("nan", "1", "latitude"),
        ("north", "1", "latitude"),
        ("51.5", "", "longitude"),
        ("", "-0.1", "latitude"),
        ("inf", "0", "latitude"),
    ],
)
def test_coordinates_out_of_range_or_half_given_are_refused(latitude, longitude, field):
    with pytest.raises(ValidationError) as error:
        coordinates_clean(latitude, longitude)
    assert field in error.value.message_dict


def test_coordinates_are_kept_to_six_places_and_both_empty_is_none():
    assert coordinates_clean("51.50136449", "-0.1418999") == (Decimal("51.501364"), Decimal("-0.141900"))
    assert coordinates_clean("", None) == (None, None)


def test_the_database_distance_is_the_haversine_distance():
    org = OrganizationFactory()
    PropertyFactory(organization=org, code="A", latitude=Decimal("51.501364"), longitude=Decimal("-0.141890"))
    [near] = properties_near(organization_id=org.pk, latitude=51.5020, longitude=-0.1410, max_metres=500)
    assert near.metres == pytest.approx(distance_metres(51.501364, -0.14189, 51.502, -0.141), rel=1e-9)
    assert 90 < near.metres < 100  # ~94 m, as any map says


def test_the_nearest_home_within_reach_wins_and_one_out_of_reach_is_not_proposed():
    org = OrganizationFactory()
    PropertyFactory(organization=org, code="NEAR", latitude=Decimal("53.796000"), longitude=Decimal("-1.547000"))
    PropertyFactory(organization=org, code="FAR", latitude=Decimal("53.797000"), longitude=Decimal("-1.547000"))
    PropertyFactory(organization=org, code="NOWHERE")  # no coordinates: never matched
    match = property_nearest(organization_id=org.pk, latitude=53.7961, longitude=-1.547, max_metres=150)
    assert match.property.code == "NEAR" and match.metres == pytest.approx(11.1, abs=0.2)
    assert property_nearest(organization_id=org.pk, latitude=53.80, longitude=-1.547, max_metres=150).property is None


def test_two_homes_about_as_near_are_a_question():
    org = OrganizationFactory()
    for code, address in (("F1", "Flat 1, 12 Elm Road"), ("F2", "Flat 2, 12 Elm Road")):
        PropertyFactory(
            organization=org, code=code, address=address, latitude=Decimal("53.8"), longitude=Decimal("-1.5")
        )
    match = property_nearest(organization_id=org.pk, latitude=53.8001, longitude=-1.5, max_metres=150)
    assert match.property is None and match.ambiguous and match.same_building
    assert {p.code for p in match.candidates} == {"F1", "F2"}


# --- the CSV import ---------------------------------------------------------------------------


@pytest.fixture
def homes():
    org = OrganizationFactory(name="Harbour Lettings")
    for code in ("FLAT-1", "FLAT-2"):
        PropertyFactory(organization=org, code=code)
    return org


def run_import(tmp_path, text, **options):
    path = tmp_path / "homes.csv"
    path.write_text(text, encoding="utf-8")
    out, err = StringIO(), StringIO()
    call_command("import_property_coordinates", str(path), stdout=out, stderr=err, **options)
    return out.getvalue(), err.getvalue()


def test_the_csv_import_sets_coordinates(homes, tmp_path):
    out, _ = run_import(tmp_path, "code,latitude,longitude,notes\nFLAT-1,53.796,-1.547,x\nFLAT-2, 53.7961 , -1.5471,\n")
    assert "2 properties of Harbour Lettings updated" in out
    assert Property.objects.get(code="FLAT-2").latitude == Decimal("53.796100")


def test_a_csv_with_mistakes_lists_every_line_and_changes_nothing(homes, tmp_path):
    text = "code,latitude,longitude\nFLAT-1,53.796,-1.547\nFLAT-9,1,1\nFLAT-2,95,0\nFLAT-1,1,1\n,1,1\n"
    err = StringIO()
    with pytest.raises(CommandError, match="4 line\\(s\\) with errors; nothing was changed"):
        path = tmp_path / "bad.csv"
        path.write_text(text)
        call_command("import_property_coordinates", str(path), stderr=err)
    lines = err.getvalue().splitlines()
    assert lines[0].startswith("line 3: no property with code 'FLAT-9'")
    assert lines[1] == "line 4: Latitude must be between -90 and 90."
    assert lines[2] == "line 5: 'FLAT-1' is already on line 2"
    assert lines[3] == "line 6: no property code"
    assert not Property.objects.filter(latitude__isnull=False).exists()  # FLAT-1's good line was not saved either


def test_a_csv_without_the_columns_or_for_another_organization_is_refused(homes, tmp_path):
    with pytest.raises(CommandError):
        run_import(tmp_path, "ref,lat,lng\nFLAT-1,1,1\n")
    other = OrganizationFactory(name="Bob Lets")
    PropertyFactory(organization=other, code="BOB-1")
    with pytest.raises(CommandError, match="say which organization"):
        run_import(tmp_path, "code,latitude,longitude\nFLAT-1,1,1\n")
    with pytest.raises(CommandError):  # FLAT-1 is not Bob's
        run_import(tmp_path, "code,latitude,longitude\nFLAT-1,1,1\n", organization="Bob Lets")
    assert Property.objects.get(code="FLAT-1").latitude is None


# --- API and admin -----------------------------------------------------------------------------


@pytest.fixture
def api_user():
    org = OrganizationFactory(name="Alice Lets")
    user = UserFactory()
    MembershipFactory(user=user, organization=org)
    return org, token_client(user)


def test_the_api_takes_and_shows_coordinates_within_range(api_user):
    _org, api = api_user
    response = api.post(
        "/api/v1/properties/",
        {"code": "P-1", "address": "1 Elm Road", "latitude": "53.79612345", "longitude": -1.547},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert (response.json()["latitude"], response.json()["longitude"]) == ("53.796123", "-1.547000")
    pk = response.json()["id"]
    response = api.patch(f"/api/v1/properties/{pk}/", {"latitude": 91}, format="json")
    assert response.status_code == 400 and "latitude" in response.json()["error"]["fields"]
    response = api.patch(f"/api/v1/properties/{pk}/", {"latitude": None}, format="json")
    assert response.status_code == 400 and "both" in str(response.json()["error"]["fields"])
    response = api.patch(f"/api/v1/properties/{pk}/", {"latitude": None, "longitude": None}, format="json")
    assert response.status_code == 200 and response.json()["latitude"] is None
    response = api.post("/api/v1/properties/", {"code": "P-2", "address": "x", "longitude": 10}, format="json")
    assert response.status_code == 400


def test_the_admin_form_refuses_half_a_pair_and_out_of_range():
    from django.forms import modelform_factory

    from properties.admin import PropertyForm

    org = OrganizationFactory()
    form_class = modelform_factory(
        Property, form=PropertyForm, fields=["organization", "code", "address", "postcode", "latitude", "longitude"]
    )
    data = {"organization": org.pk, "code": "X-1", "address": "1 Elm Road", "postcode": ""}
    form = form_class(data={**data, "latitude": "53.8"})
    assert not form.is_valid() and "longitude" in form.errors
    form = form_class(data={**data, "latitude": "53.8", "longitude": "200"})
    assert not form.is_valid() and "longitude" in form.errors
    form = form_class(data={**data, "latitude": "53.8", "longitude": "-1.5"})
    assert form.is_valid(), form.errors
    assert form.save().longitude == Decimal("-1.500000")
