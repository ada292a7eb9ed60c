"""Preparing one photo for the model (``orchestration.images``): the sizes and
formats the API takes, whatever the tenant's phone sent."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from orchestration.images import (
    MAX_IMAGE_PIXELS,
    ImageUnusable,
    image_bytes_prepare,
    image_tokens,
    target_size,
)
from orchestration.testing.photos import photo_bytes


@pytest.fixture(autouse=True)
def _vision(settings):
    settings.VISION_MAX_EDGE_PIXELS = 1568
    settings.VISION_JPEG_QUALITY = 85


@pytest.mark.parametrize(
    ("size", "ratio"),
    [((4032, 3024), 4 / 3), ((3024, 4032), 3 / 4), ((1920, 1080), 16 / 9), ((1080, 2400), 0.45), ((3000, 3000), 1.0)],
)
def test_large_photos_fit_the_apis_limits_keeping_their_shape(size, ratio):
    width, height = target_size(*size)
    assert max(width, height) <= 1568 and width * height <= MAX_IMAGE_PIXELS
    assert abs(width / height - ratio) < 0.01
    assert image_tokens(width, height) <= 1534  # the API's ~1,600-token ceiling, never resized again


def test_a_long_thin_photo_is_bound_by_its_edge_and_a_small_one_is_never_enlarged():
    assert target_size(4000, 1000) == (1568, 392)
    assert target_size(640, 480) == (640, 480)


def test_the_longest_edge_follows_the_setting(settings):
    settings.VISION_MAX_EDGE_PIXELS = 800
    prepared = image_bytes_prepare(photo_bytes(1600, 1200), content_type="image/jpeg")
    assert (prepared.width, prepared.height) == (800, 600)


def test_tokens_are_width_times_height_over_750_rounded_up():
    assert image_tokens(1000, 1000) == 1334  # the vision guide's 1000x1000 example (~1334)
    assert image_tokens(200, 200) == 54  # and its 200x200 one (~54)


@pytest.mark.parametrize(("fmt", "content_type"), [("PNG", "image/png"), ("WEBP", "image/webp"), ("GIF", "image/gif")])
def test_every_accepted_format_becomes_jpeg(fmt, content_type):
    prepared = image_bytes_prepare(photo_bytes(900, 700, fmt=fmt), content_type=content_type)
    with Image.open(io.BytesIO(prepared.jpeg)) as sent:
        assert (sent.format, sent.mode, sent.size) == ("JPEG", "RGB", (900, 700))


def test_transparency_is_flattened_onto_white():
    image = Image.new("RGBA", (300, 300), (0, 0, 0, 0))
    out = io.BytesIO()
    image.save(out, format="PNG")
    prepared = image_bytes_prepare(out.getvalue(), content_type="image/png")
    with Image.open(io.BytesIO(prepared.jpeg)) as sent:
        assert min(sent.convert("RGB").getpixel((150, 150))) > 245  # white, not black


def test_the_block_is_base64_jpeg():
    import base64

    prepared = image_bytes_prepare(photo_bytes(400, 300), content_type="image/jpeg")
    block = prepared.block()
    assert block["type"] == "image" and block["source"]["type"] == "base64"
    assert block["source"]["media_type"] == "image/jpeg"
    assert base64.b64decode(block["source"]["data"]) == prepared.jpeg


def test_a_heic_photo_opens_through_pillow_heif():
    prepared = image_bytes_prepare(photo_bytes(2000, 1500, fmt="HEIF"), content_type="image/heic")
    assert (prepared.width, prepared.height) == target_size(2000, 1500)


def test_a_heic_photo_without_pillow_heif_is_skipped_with_a_reason(monkeypatch):
    monkeypatch.setattr("orchestration.images.HEIF_SUPPORTED", False)
    with pytest.raises(ImageUnusable, match="HEIC"):
        image_bytes_prepare(photo_bytes(200, 200, fmt="HEIF"), content_type="image/heic")


def test_bytes_that_are_no_image_are_refused():
    with pytest.raises(ImageUnusable, match="could not be read"):
        image_bytes_prepare(b"<html>not a photo</html>", content_type="image/jpeg")


def test_a_damaged_heic_is_refused_or_shown_never_raised():
    # Decoders report damage as EOFError or SyntaxError too; one escaped the turn
    # and paused the assistant at every turn that showed the report's photos.
    original = photo_bytes(200, 150, fmt="HEIF")
    refused = 0
    for offset in range(len(original)):  # every byte flipped in turn
        raw = bytearray(original)
        raw[offset] ^= 0xFF
        try:
            image_bytes_prepare(bytes(raw), content_type="image/heic")
        except ImageUnusable:
            refused += 1
    assert refused > 0


def test_a_huge_png_is_refused_before_it_is_decoded():
    # A few hundred KB of PNG can decode to gigabytes; only a JPEG is decoded at a reduced scale.
    image = Image.new("1", (5000, 5000))  # 25 MP
    out = io.BytesIO()
    image.save(out, format="PNG")
    assert len(out.getvalue()) < 1_000_000
    with pytest.raises(ImageUnusable, match="too large to open"):
        image_bytes_prepare(out.getvalue(), content_type="image/png")
