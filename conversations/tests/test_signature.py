"""The signature check uses the twilio package's RequestValidator over the
public URL; these are the validator's published test vectors."""

from twilio.request_validator import RequestValidator

from conversations.twilio_client import twilio_signature_valid

PARAMS = {
    "CallSid": "CA1234567890ABCDE",
    "Caller": "+14158675309",
    "Digits": "1234",
    "From": "+14158675309",
    "To": "+18005551212",
}


def test_published_vector_without_port():
    validator = RequestValidator("12345")
    url = "https://mycompany.com/myapp.php?foo=1&bar=2"
    assert validator.compute_signature(url, PARAMS) == "RSOYDt4T1cUTdK1PDd93/VVr8B8="
    assert validator.validate(url, PARAMS, "RSOYDt4T1cUTdK1PDd93/VVr8B8=")


def test_published_vector_with_default_port():
    validator = RequestValidator("12345")
    url = "https://mycompany.com:443/myapp.php?foo=1&bar=2"
    assert validator.compute_signature(url, PARAMS) == "kvajT1Ptam85bY51eRf/AJRuM3w="
    # Twilio may sign either form; both verify against either URL.
    assert validator.validate("https://mycompany.com/myapp.php?foo=1&bar=2", PARAMS, "kvajT1Ptam85bY51eRf/AJRuM3w=")


def test_our_check_uses_public_base_url_not_host(settings):
    settings.TWILIO_AUTH_TOKEN = "12345"
    settings.PUBLIC_BASE_URL = "https://mycompany.com"
    assert twilio_signature_valid(
        path="/myapp.php?foo=1&bar=2", params=PARAMS, signature="RSOYDt4T1cUTdK1PDd93/VVr8B8="
    )
    settings.PUBLIC_BASE_URL = "https://other.example.com"
    assert not twilio_signature_valid(
        path="/myapp.php?foo=1&bar=2", params=PARAMS, signature="RSOYDt4T1cUTdK1PDd93/VVr8B8="
    )


def test_no_auth_token_never_validates(settings):
    settings.TWILIO_AUTH_TOKEN = ""
    assert not twilio_signature_valid(path="/x", params={}, signature="anything")
