import pytest

pytestmark = pytest.mark.django_db


def test_healthz_ok_when_database_and_redis_are_up(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "redis": "ok"}


def test_healthz_503_when_redis_is_unreachable(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["redis"] == "down"
    assert response.json()["database"] == "ok"
