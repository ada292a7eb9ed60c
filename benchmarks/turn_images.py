"""The cost of showing the tenant's photos to the model (issue 19).

For photos of several sizes and aspect ratios, as WhatsApp delivers them
(JPEG, mostly already scaled by the phone to about 1600 px) and as a camera
makes them (12 MP JPEG, PNG screenshots, iPhone HEIC), this measures what
``orchestration.images.image_bytes_prepare`` sends:

- the size sent and its tokens (width * height / 750, Anthropic's formula for
  an image the API does not resize further), and what those tokens cost on
  the large and small models at input prices (``llm.types.PRICES_PER_MTOK``);
- the time to prepare one photo (open, EXIF turn, resize, JPEG encode): p50 and
  p95 over ``--runs`` runs;
- the request bytes: the image block's JSON (base64 inflates by 4/3), per photo
  and for a turn with ``VISION_MAX_IMAGES_PER_TURN`` photos.

The photos are drawn with Pillow and covered with noise so they compress like
a real photo, not like a flat drawing. Prints figures, asserts nothing.

    .venv/bin/python benchmarks/turn_images.py [--runs 30]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import time
from decimal import Decimal

from _django import django_start

django_start()

from django.conf import settings  # noqa: E402
from PIL import Image  # noqa: E402

from llm.types import PRICES_PER_MTOK  # noqa: E402
from orchestration.images import image_bytes_prepare  # noqa: E402
from orchestration.testing.photos import scene_draw  # noqa: E402

# (label, width, height, format, content type)
CASES = [
    ("WhatsApp 4:3 (1600x1200 JPEG)", 1600, 1200, "JPEG", "image/jpeg"),
    ("WhatsApp 3:4 (1200x1600 JPEG)", 1200, 1600, "JPEG", "image/jpeg"),
    ("WhatsApp 16:9 (1600x900 JPEG)", 1600, 900, "JPEG", "image/jpeg"),
    ("WhatsApp 9:16 (900x1600 JPEG)", 900, 1600, "JPEG", "image/jpeg"),
    ("WhatsApp 1:1 (1280x1280 JPEG)", 1280, 1280, "JPEG", "image/jpeg"),
    ("small (640x480 JPEG)", 640, 480, "JPEG", "image/jpeg"),
    ("camera 12 MP 4:3 (4032x3024 JPEG)", 4032, 3024, "JPEG", "image/jpeg"),
    ("screenshot 9:19.5 (1170x2532 PNG)", 1170, 2532, "PNG", "image/png"),
    ("iPhone 12 MP (4032x3024 HEIC)", 4032, 3024, "HEIF", "image/heic"),
]


def photo(width: int, height: int, fmt: str) -> bytes:
    noise = Image.effect_noise((width, height), 40).convert("RGB")
    base = scene_draw(Image.new("RGB", (width, height), (180, 170, 150)), "socket_water")
    image = Image.blend(base, noise, 0.25)
    out = io.BytesIO()
    if fmt == "HEIF":
        import pillow_heif

        pillow_heif.register_heif_opener()
    image.save(out, format=fmt, **({"quality": 90} if fmt in ("JPEG", "HEIF") else {}))
    return out.getvalue()


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[round(q * (len(ordered) - 1))]


def cost(tokens: int, model_prefix: str) -> Decimal:
    return Decimal(tokens) * Decimal(PRICES_PER_MTOK[model_prefix][0]) / Decimal(1_000_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    per_turn = settings.VISION_MAX_IMAGES_PER_TURN
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"Pillow {Image.__version__}; VISION_MAX_EDGE_PIXELS={settings.VISION_MAX_EDGE_PIXELS}, "
        f"VISION_JPEG_QUALITY={settings.VISION_JPEG_QUALITY}, VISION_MAX_IMAGES_PER_TURN={per_turn}; "
        f"{args.runs} runs each"
    )
    header = (
        f"{'photo received':36} {'in KB':>7} {'sent':>10} {'tokens':>6} {'$ sonnet':>9} {'$ haiku':>8} "
        f"{'p50 ms':>7} {'p95 ms':>7} {'block KB':>9} {f'{per_turn} photos KB':>15}"
    )
    print(header)
    print("-" * len(header))
    for label, width, height, fmt, content_type in CASES:
        raw = photo(width, height, fmt)
        times = []
        prepared = None
        for _ in range(args.runs):
            started = time.perf_counter()
            prepared = image_bytes_prepare(raw, content_type=content_type)
            times.append((time.perf_counter() - started) * 1000)
        assert prepared is not None
        block_bytes = len(json.dumps(prepared.block()))
        print(
            f"{label:36} {len(raw) / 1024:7.0f} {prepared.width:>4}x{prepared.height:<5} {prepared.tokens:6d} "
            f"{cost(prepared.tokens, 'claude-sonnet'):9.5f} {cost(prepared.tokens, 'claude-haiku'):8.5f} "
            f"{statistics.median(times):7.1f} {pct(times, 0.95):7.1f} {block_bytes / 1024:9.0f} "
            f"{per_turn * block_bytes / 1024:15.0f}"
        )
    print(
        "\ntokens = width*height/750 (Anthropic vision guide), counted as input tokens on every model call of the turn "
        "that carries the photo; cost at the input price per million tokens (sonnet $3, haiku $1)."
    )


if __name__ == "__main__":
    main()
