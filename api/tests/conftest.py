import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from properties.tests.persona import alice_and_bob


@pytest.fixture
def worlds(db):
    return alice_and_bob()


def token_client(user) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def alice_api(worlds):
    return token_client(worlds[0].user)


@pytest.fixture
def bob_api(worlds):
    return token_client(worlds[1].user)
