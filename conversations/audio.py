"""How long a voice note is, read from the file itself.

``mutagen`` (pure Python, pinned in requirements/base.txt) reads the length
of OGG/Opus (WhatsApp's voice notes), OGG/Vorbis, MP3, MP4/M4A and ADTS AAC
from their headers without decoding: no subprocess and no system package, so
it works the same in the Docker image (which has no ffmpeg) as on a developer's
machine. mutagen does not read AMR: its frames are counted here (every frame
is 20 ms and its first byte says how long it is). A file nothing can read
gives None: the duration cap cannot be checked, and the transcriber decides.
"""

from __future__ import annotations

import io
import logging

import mutagen

logger = logging.getLogger(__name__)

AMR_NB_MAGIC = b"#!AMR\n"
AMR_WB_MAGIC = b"#!AMR-WB\n"
# Bytes of speech data after the one-byte frame header, by frame type (3GPP TS 26.101 / 26.201).
AMR_NB_FRAME_BYTES = [12, 13, 15, 17, 19, 20, 26, 31, 5, 6, 5, 5, 0, 0, 0, 0]
AMR_WB_FRAME_BYTES = [17, 23, 32, 36, 40, 46, 50, 58, 60, 5, 0, 0, 0, 0, 0, 0]
AMR_FRAME_SECONDS = 0.02


def audio_duration(content: bytes, content_type: str = "") -> float | None:
    """Seconds of audio in ``content``, or None when the file cannot be read."""
    if content.startswith(AMR_WB_MAGIC):
        return _amr_duration(content[len(AMR_WB_MAGIC) :], AMR_WB_FRAME_BYTES)
    if content.startswith(AMR_NB_MAGIC):
        return _amr_duration(content[len(AMR_NB_MAGIC) :], AMR_NB_FRAME_BYTES)
    try:
        parsed = mutagen.File(io.BytesIO(content))
    except Exception as exc:  # mutagen raises many kinds on a damaged file
        logger.info("could not read the length of a %s file: %r", content_type or "audio", exc)
        return None
    length = getattr(getattr(parsed, "info", None), "length", None)
    return float(length) if length else None


def _amr_duration(frames: bytes, sizes: list[int]) -> float | None:
    count, position = 0, 0
    while position < len(frames):
        frame_type = (frames[position] >> 3) & 0x0F
        position += 1 + sizes[frame_type]
        count += 1
    return count * AMR_FRAME_SECONDS if count else None
