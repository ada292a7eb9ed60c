import hashlib

import pytest

from conversations.media import MediaRetry, media_download
from conversations.models import Media
from conversations.testing.twilio_stub import TwilioStubServer
from conversations.tests.factories import MediaFactory

pytestmark = pytest.mark.django_db

JPEG = b"\xff\xd8\xff\xe0" + b"0" * 1000


def media_at(stub_url, path, **kwargs):
    return MediaFactory(provider_url=stub_url + path, **kwargs)


TWILIO_MEDIA_PATH = "/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1"


def test_download_stores_the_file_with_its_hash(twilio_stub, settings):
    twilio_stub.serve_file(TWILIO_MEDIA_PATH, JPEG)
    media = media_download(media_id=MediaFactory(provider_url="https://api.twilio.com" + TWILIO_MEDIA_PATH).pk)
    assert media.download_state == Media.DownloadState.DOWNLOADED
    assert media.sha256 == hashlib.sha256(JPEG).hexdigest()
    assert media.size == len(JPEG) and media.file.read() == JPEG
    assert twilio_stub.requests[0]["auth_user"] == settings.TWILIO_ACCOUNT_SID


def test_credentials_go_to_twilio_only_and_the_cdn_redirect_is_followed_without_them(twilio_stub, settings):
    """Twilio answers its media URL with a redirect to its CDN: the CDN (here
    a second local server) must not receive our Authorization header."""
    with TwilioStubServer() as cdn:
        cdn.stub.serve_file("/cdn/ME1.jpg", JPEG)
        twilio_stub.serve_file(TWILIO_MEDIA_PATH, b"", status=307, Location=cdn.url + "/cdn/ME1.jpg")
        media = media_download(media_id=MediaFactory(provider_url="https://api.twilio.com" + TWILIO_MEDIA_PATH).pk)
    assert media.download_state == Media.DownloadState.DOWNLOADED and media.file.read() == JPEG
    [to_twilio] = twilio_stub.requests
    [to_cdn] = cdn.stub.requests
    assert to_twilio["authorization"].startswith("Basic ")
    assert to_cdn["authorization"] == ""


@pytest.mark.parametrize(
    "path",
    [
        "/media/ME1",  # an allowed host, but not Twilio's media path
        "/2010-04-01/Accounts/AC1/Calls.json",  # Twilio, but not a media file
    ],
)
def test_credentials_are_not_sent_off_twilios_media_path(twilio_stub, settings, path):
    twilio_stub.serve_file(path, JPEG)
    media_download(media_id=media_at(settings.TWILIO_API_BASE_URL, path).pk)
    assert [r["authorization"] for r in twilio_stub.requests] == [""]


def test_a_404_is_retried_briefly(twilio_stub, settings):
    settings.MEDIA_NOT_FOUND_RETRIES = 3
    settings.MEDIA_NOT_FOUND_BACKOFF_SECONDS = 0.01
    twilio_stub.serve_file(TWILIO_MEDIA_PATH, JPEG)
    twilio_stub.serve_file_after(TWILIO_MEDIA_PATH, 404, 404)
    media = media_download(media_id=MediaFactory(provider_url="https://api.twilio.com" + TWILIO_MEDIA_PATH).pk)
    assert media.download_state == Media.DownloadState.DOWNLOADED
    assert len(twilio_stub.requests) == 3


def test_a_404_that_stays_is_rejected_after_the_retries(twilio_stub, settings):
    settings.MEDIA_NOT_FOUND_RETRIES = 2
    settings.MEDIA_NOT_FOUND_BACKOFF_SECONDS = 0.01
    media = media_download(media_id=MediaFactory(provider_url="https://api.twilio.com" + TWILIO_MEDIA_PATH).pk)
    assert media.download_state == Media.DownloadState.REJECTED
    assert "HTTP 404" in media.error and "3 tries" in media.error
    assert len(twilio_stub.requests) == 3


def test_twilio_urls_are_fetched_through_the_configured_api_base(twilio_stub):
    twilio_stub.serve_file(TWILIO_MEDIA_PATH, JPEG)
    media = MediaFactory(provider_url="https://api.twilio.com" + TWILIO_MEDIA_PATH)
    assert media_download(media_id=media.pk).download_state == Media.DownloadState.DOWNLOADED


def test_redirect_to_a_host_off_the_allowlist_is_refused(twilio_stub, settings):
    twilio_stub.serve_file(TWILIO_MEDIA_PATH, b"", status=302, Location="http://10.0.0.5/secret")
    media = media_download(media_id=MediaFactory(provider_url="https://api.twilio.com" + TWILIO_MEDIA_PATH).pk)
    assert media.download_state == Media.DownloadState.REJECTED
    assert "not allowed" in media.error
    assert len(twilio_stub.requests) == 1  # the internal address was never called


@pytest.mark.parametrize(
    "url", ["http://169.254.169.254/latest/meta-data", "https://api.twilio.com.evil.example/x", "file:///etc/passwd"]
)
def test_a_media_url_off_the_allowlist_is_never_fetched(twilio_stub, url):
    media = media_download(media_id=MediaFactory(provider_url=url).pk)
    assert media.download_state == Media.DownloadState.REJECTED and "not allowed" in media.error
    assert twilio_stub.requests == []


def test_oversized_and_wrong_type_files_are_rejected(twilio_stub, settings):
    settings.MEDIA_MAX_IMAGE_BYTES = 500
    twilio_stub.serve_file("/media/big", JPEG)
    twilio_stub.serve_file("/media/exe", b"MZ", content_type="application/x-msdownload")
    big = media_download(media_id=media_at(settings.TWILIO_API_BASE_URL, "/media/big").pk)
    exe = media_download(media_id=media_at(settings.TWILIO_API_BASE_URL, "/media/exe").pk)
    assert big.download_state == exe.download_state == Media.DownloadState.REJECTED
    assert "MEDIA_MAX_IMAGE_BYTES" in big.error and "not accepted" in exe.error


def test_a_connection_broken_mid_file_is_retried(twilio_stub, settings):
    twilio_stub.serve_file("/media/cut", JPEG, **{"Content-Length": str(len(JPEG) * 4)})
    media = media_at(settings.TWILIO_API_BASE_URL, "/media/cut")
    with pytest.raises(MediaRetry, match="Connection broken"):
        media_download(media_id=media.pk)
    media.refresh_from_db()
    assert media.download_state == Media.DownloadState.PENDING and not media.file


def test_a_signed_cdn_links_token_stays_out_of_the_error(twilio_stub, settings):
    """The CDN link Twilio redirects to fetches the file on its own; the
    error text goes to logs and to Media.error."""
    with TwilioStubServer() as cdn:
        closed = cdn.url  # nothing listens here once the server has stopped
    signed = closed + "/cdn/ME1.jpg?X-Amz-Security-Token=SECRET123&X-Amz-Signature=abc"
    twilio_stub.serve_file(TWILIO_MEDIA_PATH, b"", status=307, Location=signed)
    with pytest.raises(MediaRetry) as raised:
        media_download(media_id=MediaFactory(provider_url="https://api.twilio.com" + TWILIO_MEDIA_PATH).pk)
    assert "/cdn/ME1.jpg?..." in str(raised.value) and "SECRET123" not in str(raised.value)


def test_server_errors_are_retried(twilio_stub, settings):
    twilio_stub.serve_file("/media/flaky", b"oops", content_type="text/plain", status=503)
    media = media_at(settings.TWILIO_API_BASE_URL, "/media/flaky")
    with pytest.raises(MediaRetry):
        media_download(media_id=media.pk)
    media.refresh_from_db()
    assert media.download_state == Media.DownloadState.PENDING


@pytest.mark.django_db(transaction=True)
def test_downloads_of_one_message_at_once_keep_to_its_total_cap(twilio_stub, settings, monkeypatch):
    """Each photo of a message downloads in its own task: two finishing
    together must not both be stored past MEDIA_MAX_TOTAL_BYTES."""
    import threading

    from django.db import connection

    import conversations.media as media_module

    settings.MEDIA_MAX_TOTAL_BYTES = len(JPEG) * 3 // 2  # room for one of the two
    first = MediaFactory(provider_url="https://api.twilio.com" + TWILIO_MEDIA_PATH)
    second = MediaFactory(message=first.message, index=1, provider_url=first.provider_url)
    twilio_stub.serve_file(TWILIO_MEDIA_PATH, JPEG)
    fetch, both_fetched = media_module._fetch, threading.Barrier(2, timeout=10)

    def fetched_together(url):
        got = fetch(url)
        both_fetched.wait()  # both files are in memory before either is stored
        return got

    monkeypatch.setattr(media_module, "_fetch", fetched_together)

    def download(media_id):
        try:
            media_download(media_id=media_id)
        finally:
            connection.close()

    threads = [threading.Thread(target=download, args=(m.pk,)) for m in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    states = sorted(Media.objects.filter(message=first.message).values_list("download_state", flat=True))
    assert states == ["downloaded", "rejected"]
