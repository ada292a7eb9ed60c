import hashlib

import pytest

from conversations.media import MediaRetry, media_download
from conversations.models import Media
from conversations.tests.factories import MediaFactory

pytestmark = pytest.mark.django_db

JPEG = b"\xff\xd8\xff\xe0" + b"0" * 1000


def media_at(stub_url, path, **kwargs):
    return MediaFactory(provider_url=stub_url + path, **kwargs)


def test_download_stores_the_file_with_its_hash(twilio_stub, settings):
    twilio_stub.serve_file("/media/ME1", JPEG)
    media = media_download(media_id=media_at(settings.TWILIO_API_BASE_URL, "/media/ME1").pk)
    assert media.download_state == Media.DownloadState.DOWNLOADED
    assert media.sha256 == hashlib.sha256(JPEG).hexdigest()
    assert media.size == len(JPEG) and media.file.read() == JPEG
    assert twilio_stub.requests[0]["auth_user"] == settings.TWILIO_ACCOUNT_SID


def test_twilio_urls_are_fetched_through_the_configured_api_base(twilio_stub):
    twilio_stub.serve_file("/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1", JPEG)
    media = MediaFactory(provider_url="https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1")
    assert media_download(media_id=media.pk).download_state == Media.DownloadState.DOWNLOADED


def test_redirect_to_a_host_off_the_allowlist_is_refused(twilio_stub, settings):
    twilio_stub.serve_file("/media/ME2", b"", status=302, Location="http://10.0.0.5/secret")
    media = media_download(media_id=media_at(settings.TWILIO_API_BASE_URL, "/media/ME2").pk)
    assert media.download_state == Media.DownloadState.REJECTED
    assert "not allowed" in media.error


def test_oversized_and_wrong_type_files_are_rejected(twilio_stub, settings):
    settings.MEDIA_MAX_IMAGE_BYTES = 500
    twilio_stub.serve_file("/media/big", JPEG)
    twilio_stub.serve_file("/media/exe", b"MZ", content_type="application/x-msdownload")
    big = media_download(media_id=media_at(settings.TWILIO_API_BASE_URL, "/media/big").pk)
    exe = media_download(media_id=media_at(settings.TWILIO_API_BASE_URL, "/media/exe").pk)
    assert big.download_state == exe.download_state == Media.DownloadState.REJECTED
    assert "MEDIA_MAX_IMAGE_BYTES" in big.error and "not accepted" in exe.error


def test_server_errors_are_retried(twilio_stub, settings):
    twilio_stub.serve_file("/media/flaky", b"oops", content_type="text/plain", status=503)
    media = media_at(settings.TWILIO_API_BASE_URL, "/media/flaky")
    with pytest.raises(MediaRetry):
        media_download(media_id=media.pk)
    media.refresh_from_db()
    assert media.download_state == Media.DownloadState.PENDING
