"""URL-confusion tricks against the media download (issue 18, item 1).

A canary HTTP server listens on 127.0.0.1 and fails the test if anything
connects to it. Every other connection the download tries to open (any host,
any port, other than the Twilio stub) is recorded and sent to the canary too,
so a trick that gets past the check is caught whatever it resolves to, and no
test reaches the internet.

In tests 127.0.0.1 is where the stubs live (``MEDIA_FETCH_LOCAL`` is on, as in
development). The ``production`` fixture turns it off explicitly and uses the
production host list, with 127.0.0.1 added as if an operator had put it there:
the check must refuse this machine all the same.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import urllib3.util.connection

from config.tests.test_settings import django_setup
from conversations.media import media_download
from conversations.models import Media
from conversations.testing.signing import inbound_params
from conversations.tests.factories import MediaFactory, MessageFactory
from conversations.twilio_client import MediaUrlRefused, media_url_check
from properties.tests.factories import OrganizationFactory, WhatsAppNumberFactory

pytestmark = pytest.mark.django_db

JPEG = b"\xff\xd8\xff\xe0" + b"0" * 200
MEDIA_PATH = "/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1"
TWILIO_URL = "https://api.twilio.com" + MEDIA_PATH


class _CanaryHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "image/jpeg")
        self.send_header("Content-Length", str(len(JPEG)))
        self.end_headers()
        self.wfile.write(JPEG)

    def log_message(self, format, *args):
        pass


class Canary(ThreadingHTTPServer):
    """Answers like a media host would, and remembers every connection it
    accepted (before any HTTP, so a TLS handshake counts too)."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _CanaryHandler)
        self.contacts: list[tuple[str, int]] = []
        # Where the download tried to connect (filled by the ``canary`` fixture's guard).
        self.attempts: list[tuple[str, int]] = []

    def process_request(self, request, client_address):
        self.contacts.append(client_address)
        super().process_request(request, client_address)


@pytest.fixture
def canary(twilio_stub, settings, monkeypatch):
    """The canary, and every outgoing connection but the Twilio stub's routed
    to it. ``canary.attempts`` lists where the download tried to connect."""
    server = Canary()
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    stub_port = int(settings.TWILIO_API_BASE_URL.rsplit(":", 1)[1])
    real_create_connection = urllib3.util.connection.create_connection
    attempts = server.attempts

    def guarded(address, *args, **kwargs):
        if address == ("127.0.0.1", stub_port):
            return real_create_connection(address, *args, **kwargs)
        attempts.append(address)
        return real_create_connection(("127.0.0.1", server.server_port), *args, **kwargs)

    monkeypatch.setattr(urllib3.util.connection, "create_connection", guarded)
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def production(settings):
    """Production's media rules, stated here rather than inherited."""
    settings.MEDIA_FETCH_LOCAL = False
    settings.TWILIO_MEDIA_HOSTS = ["api.twilio.com", "twiliocdn.com", "twilio.com", "127.0.0.1"]


def tricks(port: int) -> list[str]:
    """The known URL-confusion tricks, aimed at the canary's port (and, where
    a trick names a host, at whatever the guard routes to the canary)."""
    local = f"127.0.0.1:{port}"
    return [
        # A backslash: urlsplit sees api.twilio.com, urllib3 connects to what comes before it.
        f"https://{local}\\@api.twilio.com{MEDIA_PATH}",
        f"http://{local}\\@api.twilio.com{MEDIA_PATH}",
        f"https://evil.example\\@api.twilio.com{MEDIA_PATH}",
        f"https://api.twilio.com\\@{local}{MEDIA_PATH}",
        f"https://api.twilio.com\\{MEDIA_PATH}",
        # Userinfo: everything before @ is a name, not the host.
        f"https://api.twilio.com@{local}{MEDIA_PATH}",
        f"https://api.twilio.com:443@{local}{MEDIA_PATH}",
        f"https://AC1:token@api.twilio.com{MEDIA_PATH}",
        f"https://@api.twilio.com{MEDIA_PATH}",
        # #@ and ?@: the host ends at # or ?, whatever follows.
        f"http://{local}#@api.twilio.com{MEDIA_PATH}",
        f"https://evil.example#@api.twilio.com{MEDIA_PATH}",
        f"{TWILIO_URL}#@evil.example",
        f"http://{local}?@api.twilio.com{MEDIA_PATH}",
        f"https://evil.example?@api.twilio.com{MEDIA_PATH}",
        # Encoded dots and other spellings of a host.
        f"https://127%2E0%2E0%2E1:{port}{MEDIA_PATH}",
        f"https://api%2Etwilio%2Ecom{MEDIA_PATH}",
        f"https://api.twilio.com%2E{MEDIA_PATH}",
        f"https://api.twilio.com.{MEDIA_PATH}",
        "https://api\u3002twilio\u3002com" + MEDIA_PATH,
        "https://api.twilio.com\t@evil.example" + MEDIA_PATH,
        f"https://api.twilio.com.{local}{MEDIA_PATH}",
        f"https://api.twilio.com.evil.example{MEDIA_PATH}",
        # IPv4 in decimal, hex, octal, short and mixed notation.
        f"http://2130706433:{port}{MEDIA_PATH}",
        f"http://0x7f000001:{port}{MEDIA_PATH}",
        f"http://0177.0.0.1:{port}{MEDIA_PATH}",
        f"http://0x7f.0.0.1:{port}{MEDIA_PATH}",
        f"http://127.1:{port}{MEDIA_PATH}",
        f"https://2130706433{MEDIA_PATH}",
        # IPv6, v4-mapped IPv6, 0.0.0.0.
        f"http://[::1]:{port}{MEDIA_PATH}",
        f"http://[::ffff:127.0.0.1]:{port}{MEDIA_PATH}",
        f"http://[::ffff:7f00:1]:{port}{MEDIA_PATH}",
        f"https://[::1]{MEDIA_PATH}",
        f"http://0.0.0.0:{port}{MEDIA_PATH}",
        f"http://0:{port}{MEDIA_PATH}",
        # This machine by name and by its plain address, outside development.
        f"http://{local}{MEDIA_PATH}",
        f"https://127.0.0.1{MEDIA_PATH}",
        f"http://localhost:{port}{MEDIA_PATH}",
        f"https://localhost{MEDIA_PATH}",
        # A non-default port, plain HTTP, a padded port, other schemes, no scheme.
        f"https://api.twilio.com:{port}{MEDIA_PATH}",
        f"https://api.twilio.com:0443{MEDIA_PATH}",
        f"https://api.twilio.com:{MEDIA_PATH}",
        f"http://api.twilio.com{MEDIA_PATH}",
        f"ftp://api.twilio.com{MEDIA_PATH}",
        f"//{local}{MEDIA_PATH}",
        f"file://{MEDIA_PATH}",
    ]


TRICK_COUNT = len(tricks(1))


def assert_untouched(canary, stub_requests: int, twilio_stub) -> None:
    assert canary.attempts == [], f"the download tried to connect to {canary.attempts}"
    assert canary.contacts == [], "the canary was contacted"
    assert len(twilio_stub.requests) == stub_requests


@pytest.mark.parametrize("index", range(TRICK_COUNT))
def test_a_confusing_media_url_is_refused_and_nothing_is_contacted(canary, production, twilio_stub, index):
    url = tricks(canary.server_port)[index]
    with pytest.raises(MediaUrlRefused):
        media_url_check(url)
    media = media_download(media_id=MediaFactory(provider_url=url).pk)
    assert media.download_state == Media.DownloadState.REJECTED, url
    assert "not allowed" in media.error
    assert_untouched(canary, 0, twilio_stub)


@pytest.mark.parametrize("index", range(TRICK_COUNT))
def test_a_redirect_to_a_confusing_url_is_refused_and_nothing_is_contacted(canary, production, twilio_stub, index):
    """Twilio's media path (the stub) answers with a redirect to the trick:
    the first hop is the only one made, and the trick never is."""
    location = tricks(canary.server_port)[index]
    # On the wire as UTF-8 bytes, as a server would send them.
    twilio_stub.serve_file(MEDIA_PATH, b"", status=302, Location=location.encode().decode("latin-1"))
    media = media_download(media_id=MediaFactory(provider_url=TWILIO_URL).pk)
    assert media.download_state == Media.DownloadState.REJECTED, location
    assert "not allowed" in media.error
    assert_untouched(canary, 1, twilio_stub)


@pytest.mark.parametrize("location", ["//{local}/x.jpg", "\\\\{local}/x.jpg", "/\\{local}/x.jpg", "\\/{local}/x.jpg"])
def test_a_relative_redirect_that_escapes_the_host_is_refused(canary, production, twilio_stub, location):
    twilio_stub.serve_file(
        MEDIA_PATH, b"", status=302, Location=location.format(local=f"127.0.0.1:{canary.server_port}")
    )
    media = media_download(media_id=MediaFactory(provider_url=TWILIO_URL).pk)
    assert media.download_state == Media.DownloadState.REJECTED
    assert_untouched(canary, 1, twilio_stub)


def test_credentials_never_ride_a_redirect_even_to_twilios_own_media_path(canary, production, twilio_stub, settings):
    """A redirect from Twilio's media path to another media path on
    api.twilio.com is followed without the Authorization header."""
    other = MEDIA_PATH.replace("ME1", "ME2")
    twilio_stub.serve_file(MEDIA_PATH, b"", status=302, Location="https://api.twilio.com" + other)
    twilio_stub.serve_file(other, JPEG)
    media = media_download(media_id=MediaFactory(provider_url=TWILIO_URL).pk)
    assert media.download_state == Media.DownloadState.DOWNLOADED
    first, second = twilio_stub.requests
    assert first["auth_user"] == settings.TWILIO_ACCOUNT_SID
    assert second["path"] == other and second["authorization"] == ""
    assert_untouched(canary, 2, twilio_stub)


def test_twilios_media_url_is_still_downloaded_in_production_mode(canary, production, twilio_stub, settings):
    twilio_stub.serve_file(MEDIA_PATH, JPEG)
    media = media_download(media_id=MediaFactory(provider_url="https://api.twilio.com:443" + MEDIA_PATH).pk)
    assert media.download_state == Media.DownloadState.DOWNLOADED and media.file.read() == JPEG
    assert twilio_stub.requests[0]["auth_user"] == settings.TWILIO_ACCOUNT_SID
    assert_untouched(canary, 1, twilio_stub)


@pytest.mark.parametrize(
    ("url", "rebuilt", "twilio"),
    [
        (TWILIO_URL, TWILIO_URL, True),
        ("https://API.Twilio.com:443" + MEDIA_PATH, TWILIO_URL, True),
        ("https://api.twilio.com" + MEDIA_PATH.replace("MM1", "SM1"), None, True),
        (TWILIO_URL + "?x=1", None, False),  # credentials only on the bare media path
        (TWILIO_URL + "/../../../../Calls.json", "https://api.twilio.com/2010-04-01/Accounts/AC1/Calls.json", False),
        ("https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME%31", None, False),
        ("https://api.twilio.com/2010-04-01/Accounts/AC\u0661/Messages/MM1/Media/ME1", "refused", False),
        ("https://media.twiliocdn.com/ME1.jpg?Expires=1&Signature=a", None, False),
    ],
)
def test_allowed_urls_are_rebuilt_from_their_parts(production, url, rebuilt, twilio):
    if rebuilt == "refused":
        with pytest.raises(MediaUrlRefused):
            media_url_check(url)
        return
    target = media_url_check(url)
    assert target.url == (rebuilt or url)
    assert target.twilio is twilio


def test_development_may_fetch_from_this_machine_only_by_its_plain_address(settings):
    settings.MEDIA_FETCH_LOCAL = True
    settings.TWILIO_MEDIA_HOSTS = ["api.twilio.com", "127.0.0.1"]
    assert media_url_check("http://127.0.0.1:8123/photo.jpg").url == "http://127.0.0.1:8123/photo.jpg"
    for url in ["http://2130706433:8123/", "http://127.1:8123/", "http://[::1]:8123/", "http://localhost:8123/"]:
        with pytest.raises(MediaUrlRefused):
            media_url_check(url)


def unrouted_message():
    return MessageFactory(
        conversation=None, organization=None, from_address="whatsapp:+447700900123", flags=["unrouted"]
    )


def malformed_message():
    organization = OrganizationFactory()
    return MessageFactory(
        conversation=None, organization=organization, from_address="+447700900123", flags=["malformed"]
    )


def flagged_in_a_conversation():
    return MessageFactory(flags=["malformed"])


@pytest.mark.parametrize(
    ("make_message", "reason"),
    [(unrouted_message, "unrouted"), (malformed_message, "malformed"), (flagged_in_a_conversation, "malformed")],
)
def test_media_of_unrouted_or_malformed_messages_are_never_downloaded(canary, twilio_stub, make_message, reason):
    twilio_stub.serve_file(MEDIA_PATH, JPEG)
    media = media_download(media_id=MediaFactory(message=make_message(), provider_url=TWILIO_URL).pk)
    assert media.download_state == Media.DownloadState.REJECTED
    assert reason in media.error
    assert_untouched(canary, 0, twilio_stub)


@pytest.mark.parametrize(
    "params",
    [
        inbound_params(phone="+447700900123", to="+19999999999", media=[(TWILIO_URL, "image/jpeg")]),  # unrouted
        inbound_params(phone="+447700900123", to="+14155550001", media=[(TWILIO_URL, "image/jpeg")])
        | {"From": "+447700900123"},  # malformed: not a WhatsApp sender
    ],
    ids=["unrouted", "malformed"],
)
def test_the_webhook_queues_no_download_for_unrouted_or_malformed_messages(
    post_inbound, queued, django_capture_on_commit_callbacks, params
):
    WhatsAppNumberFactory(number="+14155550001")
    with django_capture_on_commit_callbacks(execute=True):
        post_inbound(params)
    [media] = Media.objects.all()
    assert media.download_state == Media.DownloadState.REJECTED and "not downloaded" in media.error
    assert all(name != "media.download" for name, *_ in queued)


def test_production_refuses_to_start_with_local_media_fetching():
    result = django_setup(MEDIA_FETCH_LOCAL="true")
    assert result.returncode != 0
    assert "MEDIA_FETCH_LOCAL" in result.stderr


def test_the_canary_notices_a_connection(canary):
    """The guard itself works: a connection anywhere ends up at the canary."""
    sock = urllib3.util.connection.create_connection(("203.0.113.9", 443), timeout=2)
    sock.close()
    assert canary.attempts == [("203.0.113.9", 443)]
    for _ in range(50):
        if canary.contacts:
            break
        threading.Event().wait(0.02)
    assert canary.contacts
