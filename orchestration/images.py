"""The tenant's photos as the model sees them: image content blocks made from
our own copy of each photo (``Media.file``), never Twilio's URL.

Which photos (``turn_images``):

- the photos of this turn's messages, and, when an issue may be created
  (``gating.create_issue_possible``, or an emergency), the report's photos
  (``issues.services.report_photos``), so the model sees what it files;
- the newest ``VISION_MAX_IMAGES_PER_TURN`` of them; stickers never;
- none when vision is off (``VISION_ENABLED``, or the organization's
  ``vision_enabled``): the model reads "[sent N photo(s)]" as before.

How (``image_prepare``): opened with Pillow (HEIC/HEIF through pillow-heif),
turned upright by its EXIF orientation, flattened to RGB, scaled down so the
longest edge is at most ``VISION_MAX_EDGE_PIXELS`` and the area at most
``MAX_IMAGE_PIXELS``, and re-encoded as JPEG at ``VISION_JPEG_QUALITY``.
Anthropic's vision guide (docs.claude.com/en/docs/vision): JPEG, PNG, GIF
and WebP are accepted; an image whose long edge is over 1568 px or that is
over about 1,600 tokens is scaled down by the API itself (slower, no better),
so we send at most 1.15 megapixels; 8000x8000 px and 5 MB per image and
32 MB per request are hard limits; an image costs about
``width * height / 750`` tokens (``image_tokens``).

A photo still downloading, one that cannot be opened (a HEIC without
pillow-heif, a broken file) or one beyond the limit is not sent: the context
says so in a note, so the model does not pretend to have seen it.
"""

from __future__ import annotations

import base64
import io
import logging
import math
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.utils import timezone
from PIL import Image, ImageOps

from conversations import message_kinds
from conversations.models import Conversation, Media
from llm.types import image_block, text_block

logger = logging.getLogger(__name__)

try:  # HEIC/HEIF (iPhone photos); without it such a photo is skipped with a note
    import pillow_heif

    pillow_heif.register_heif_opener()
    HEIF_SUPPORTED = True
except ImportError:  # pragma: no cover - the wheel is pinned in requirements/base.txt
    HEIF_SUPPORTED = False

HEIF_TYPES = ("image/heic", "image/heif", "image/heic-sequence", "image/heif-sequence")
# The API's own limits (Anthropic vision guide): beyond about 1.15 megapixels
# (~1,600 tokens) it scales the image down itself, so we never send more.
MAX_IMAGE_PIXELS = 1_150_000
MAX_IMAGE_BYTES = 5 * 1024 * 1024
# Decompression-bomb guards for what we open. A JPEG is decoded at a reduced
# scale, so far above any phone camera is fine; other formats (PNG, WebP,
# HEIC, GIF, TIFF) are decoded at full size, several bytes per pixel at each
# step: a 329 KB PNG of 80 megapixels took 1.4 GB to prepare, one of 50 about
# 820 MB. WhatsApp sends photos at most about 4096 px on a side (16 MP).
OPEN_MAX_PIXELS = 80_000_000
OPEN_MAX_PIXELS_FULL_DECODE = 24_000_000
TOKENS_DIVISOR = 750


def image_tokens(width: int, height: int) -> int:
    """The tokens the API counts for an image of this size (it is not
    resized further: we send within its limits): width * height / 750."""
    return math.ceil(width * height / TOKENS_DIVISOR)


def target_size(width: int, height: int, *, max_edge: int | None = None) -> tuple[int, int]:
    """The size a photo is sent at: the aspect ratio kept, the longest edge at
    most ``max_edge`` (``VISION_MAX_EDGE_PIXELS``) and the area at most
    ``MAX_IMAGE_PIXELS``; never enlarged."""
    max_edge = max_edge or settings.VISION_MAX_EDGE_PIXELS
    scale = min(1.0, max_edge / max(width, height), math.sqrt(MAX_IMAGE_PIXELS / (width * height)))
    return max(1, math.floor(width * scale)), max(1, math.floor(height * scale))


class ImageUnusable(Exception):
    """The photo cannot be shown to the model; the message says why, for the context."""

    def __init__(self, reason: str, *, pending: bool = False):
        super().__init__(reason)
        self.pending = pending  # still downloading: it may be shown in a later turn


@dataclass(frozen=True)
class PreparedImage:
    media_id: int
    width: int
    height: int
    jpeg: bytes
    source_type: str

    @property
    def tokens(self) -> int:
        return image_tokens(self.width, self.height)

    @property
    def data(self) -> str:
        return base64.b64encode(self.jpeg).decode("ascii")

    def block(self) -> dict[str, Any]:
        return image_block(data=self.data, media_type="image/jpeg")


def image_bytes_prepare(raw: bytes, *, content_type: str = "", media_id: int = 0) -> PreparedImage:
    """Resize and re-encode one photo's bytes. Raises ``ImageUnusable``."""
    if content_type.lower() in HEIF_TYPES and not HEIF_SUPPORTED:
        raise ImageUnusable("a HEIC photo, which this server cannot convert")
    try:
        image = _decoded(raw)
    except ImageUnusable:
        raise
    except Exception as exc:  # a decoder's error of any type: pillow-heif raises EOFError
        raise ImageUnusable(f"a file that could not be read as an image ({type(exc).__name__})") from exc
    return _jpeg_for_model(image, content_type=content_type, media_id=media_id)


def _decoded(raw: bytes) -> Image.Image:
    with Image.open(io.BytesIO(raw)) as opened:
        jpeg = opened.format == "JPEG"
        if opened.width * opened.height > (OPEN_MAX_PIXELS if jpeg else OPEN_MAX_PIXELS_FULL_DECODE):
            raise ImageUnusable(f"a photo too large to open ({opened.width}x{opened.height})")
        opened.seek(0)  # the first frame of a GIF or an image sequence
        if jpeg:  # decode at a reduced scale (DCT scaling): a 12 MP photo ~4x faster
            opened.draft("RGB", target_size(opened.width, opened.height))
        image = ImageOps.exif_transpose(opened)
        image.load()
    if image.mode in ("RGBA", "LA", "P", "PA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        flat = Image.new("RGB", rgba.size, (255, 255, 255))
        flat.paste(rgba, mask=rgba.getchannel("A"))
        image = flat
    elif image.mode != "RGB":
        image = image.convert("RGB")
    return image


def _jpeg_for_model(image: Image.Image, *, content_type: str, media_id: int) -> PreparedImage:
    size = target_size(image.width, image.height)
    if size != image.size:
        image = image.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=settings.VISION_JPEG_QUALITY, optimize=True)
    jpeg = out.getvalue()
    if len(jpeg) > MAX_IMAGE_BYTES:  # cannot happen at 1.15 MP, but the API would refuse the whole call
        raise ImageUnusable("a photo still over 5 MB once resized")
    return PreparedImage(media_id=media_id, width=image.width, height=image.height, jpeg=jpeg, source_type=content_type)


def image_prepare(media: Media) -> PreparedImage:
    """One downloaded photo from our storage, ready for the model."""
    if media.download_state != Media.DownloadState.DOWNLOADED or not media.file:
        raise ImageUnusable("still downloading", pending=True)
    try:
        with media.file.open("rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise ImageUnusable("a photo missing from our storage") from exc
    return image_bytes_prepare(raw, content_type=media.content_type, media_id=media.pk)


def vision_on(conversation: Conversation) -> bool:
    return bool(settings.VISION_ENABLED and conversation.organization.vision_enabled)


@dataclass
class TurnImages:
    """The photos shown to the model in one call, and what it is told about the rest."""

    images: list[PreparedImage] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # one per image, in order
    notes: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return sum(image.tokens for image in self.images)

    def blocks(self) -> list[dict[str, Any]]:
        """The content blocks that go before the context's text: each photo
        after a short label naming it (images before text, as the vision
        guide advises)."""
        blocks: list[dict[str, Any]] = []
        for label, image in zip(self.labels, self.images, strict=True):
            blocks += [text_block(label), image.block()]
        return blocks


@dataclass
class ImageCache:
    """Photos prepared once per turn (a turn may call the model several times)."""

    prepared: dict[int, PreparedImage | ImageUnusable] = field(default_factory=dict)

    def get(self, media: Media) -> PreparedImage:
        if media.pk not in self.prepared:
            try:
                self.prepared[media.pk] = image_prepare(media)
            except ImageUnusable as exc:
                logger.info("photo %s not shown to the model: %s", media.pk, exc)
                self.prepared[media.pk] = exc
        found = self.prepared[media.pk]
        if isinstance(found, ImageUnusable):
            raise found
        return found


def photos_select(candidates: list[Media], *, limit: int) -> tuple[list[Media], int]:
    """The newest ``limit`` photos (by arrival), shown oldest first; and how many were left out."""
    ordered = sorted(
        {m.pk: m for m in candidates}.values(), key=lambda m: (m.message.created_at, m.message_id, m.index)
    )
    chosen = ordered[-limit:] if limit > 0 else []
    return chosen, len(ordered) - len(chosen)


def is_photo(media: Media) -> bool:
    return (
        message_kinds.media_kind(media.content_type) == message_kinds.IMAGE
        and media.message.kind != message_kinds.STICKER
    )


def turn_images_build(*, candidates: list[Media], zone, cache: ImageCache, limit: int | None = None) -> TurnImages:
    """Prepare the chosen photos; what cannot be shown becomes a note."""
    limit = settings.VISION_MAX_IMAGES_PER_TURN if limit is None else limit
    chosen, left_out = photos_select([m for m in candidates if is_photo(m)], limit=limit)
    result = TurnImages()
    skipped: dict[str, int] = {}
    pending = 0
    for media in chosen:
        try:
            prepared = cache.get(media)
        except ImageUnusable as exc:
            if exc.pending:
                pending += 1
            else:
                skipped[str(exc)] = skipped.get(str(exc), 0) + 1
            continue
        sent = timezone.localtime(media.message.created_at, zone)
        result.images.append(prepared)
        result.labels.append(f"Photo {len(result.images)} (sent by the tenant at {sent:%Y-%m-%d %H:%M}):")
    if result.images:
        result.notes.append(
            f"You can see the tenant's {len(result.images)} photo(s) above (Photo 1-{len(result.images)}, "
            "oldest first)."
        )
    if pending:
        result.notes.append(
            f"{pending} photo(s) still downloading, not shown to you: do not describe them; go on from the "
            "tenant's words (the photo counts as received)."
        )
    for reason, count in skipped.items():
        result.notes.append(
            f"{count} photo(s) not shown to you ({reason}): do not describe what you have not seen; "
            "go on from the tenant's words, and ask for a description if it matters."
        )
    if left_out:
        result.notes.append(f"{left_out} older photo(s) of this report are not shown (only the newest {limit}).")
    return result
