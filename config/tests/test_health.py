import pytest

pytestmark = pytest.mark.django_db


def test_healthz_ok_when_database_and_redis_are_up(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "redis": "ok", "emergency_classifier": "ready"}


def test_healthz_says_the_classifier_is_unavailable_but_stays_200(client, settings, tmp_path):
    from emergencies.classifier import classifier_reset

    settings.EMERGENCY_CLASSIFIER_PATH = str(tmp_path / "missing.json")
    classifier_reset()
    try:
        response = client.get("/healthz")
    finally:
        classifier_reset()
    assert response.status_code == 200
    assert response.json()["emergency_classifier"] == "unavailable"


def test_healthz_503_when_redis_is_unreachable(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["redis"] == "down"
    assert response.json()["database"] == "ok"
