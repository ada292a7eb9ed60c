"""Photos made with Pillow for tests, the benchmark and the golden scenarios'
media (``evals/scenarios/media/``): drawn, not taken, so they are small,
deterministic and free of anyone's home."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw


def photo_bytes(
    width: int = 1200,
    height: int = 900,
    *,
    fmt: str = "JPEG",
    color: tuple[int, int, int] = (180, 170, 150),
    scene: str = "",
    quality: int = 80,
    exif_orientation: int = 0,
) -> bytes:
    """A photo of ``width`` x ``height`` in ``fmt`` (JPEG, PNG, WEBP, GIF, HEIF):
    a wall of ``color``, with a drawn ``scene`` ("socket_water", "ceiling_stain",
    "boiler_soot", "dripping_tap") when given. ``exif_orientation`` sets the EXIF
    tag a phone writes when it was held sideways."""
    image = scene_draw(Image.new("RGB", (width, height), color), scene)
    out = io.BytesIO()
    options: dict = {}
    if fmt == "JPEG":
        options["quality"] = quality
    if fmt == "HEIF":
        import pillow_heif

        pillow_heif.register_heif_opener()
        options["quality"] = quality
    if exif_orientation:
        exif = Image.Exif()
        exif[0x0112] = exif_orientation
        options["exif"] = exif.tobytes()
    image.save(out, format=fmt, **options)
    return out.getvalue()


def scene_draw(image: Image.Image, scene: str) -> Image.Image:
    draw = ImageDraw.Draw(image)
    w, h = image.size
    unit = min(w, h) / 10
    if scene == "socket_water":  # a double socket with water running down the wall onto it
        sx, sy = w * 0.45, h * 0.55
        draw.rectangle([sx, sy, sx + 2.4 * unit, sy + 1.2 * unit], fill=(245, 245, 240), outline=(90, 90, 90), width=3)
        for i in (0.3, 1.5):
            draw.rectangle([sx + i * unit, sy + 0.3 * unit, sx + (i + 0.6) * unit, sy + 0.9 * unit], fill=(60, 60, 60))
        for x in (sx + 0.5 * unit, sx + 1.2 * unit, sx + 1.9 * unit):
            draw.line([x, 0, x + 0.1 * unit, sy + 1.6 * unit], fill=(70, 110, 170), width=max(2, int(unit / 6)))
        draw.ellipse([sx + 1.0 * unit, sy + 0.9 * unit, sx + 1.8 * unit, sy + 1.4 * unit], fill=(40, 30, 25))
    elif scene == "socket_scorch":  # a double socket with black scorch marks and a melted plug
        sx, sy = w * 0.35, h * 0.4
        draw.ellipse([sx - 0.6 * unit, sy - 1.2 * unit, sx + 3.0 * unit, sy + 1.6 * unit], fill=(45, 35, 30))
        draw.rectangle([sx, sy, sx + 2.4 * unit, sy + 1.2 * unit], fill=(230, 225, 210), outline=(90, 90, 90), width=3)
        draw.ellipse([sx + 0.2 * unit, sy + 0.1 * unit, sx + 1.2 * unit, sy + 1.1 * unit], fill=(20, 15, 10))
        melted = [
            (sx + 0.3 * unit, sy + 0.4 * unit),
            (sx + 1.1 * unit, sy + 0.3 * unit),
            (sx + 0.9 * unit, sy + 1.5 * unit),
        ]
        draw.polygon(melted, fill=(60, 50, 40))
    elif scene == "ceiling_stain":  # a brown water stain on a ceiling
        draw.ellipse([w * 0.3, h * 0.25, w * 0.7, h * 0.65], fill=(150, 120, 80))
        draw.ellipse([w * 0.38, h * 0.33, w * 0.62, h * 0.57], fill=(120, 90, 55))
    elif scene == "boiler_soot":  # a white boiler with black soot around the flue
        draw.rectangle([w * 0.3, h * 0.2, w * 0.7, h * 0.85], fill=(235, 235, 235), outline=(80, 80, 80), width=3)
        draw.ellipse([w * 0.4, h * 0.02, w * 0.6, h * 0.3], fill=(25, 25, 25))
        draw.rectangle([w * 0.47, 0, w * 0.53, h * 0.2], fill=(120, 120, 120))
    elif scene == "dripping_tap":  # a tap over a sink with drops
        draw.rectangle([w * 0.2, h * 0.6, w * 0.8, h * 0.9], fill=(220, 225, 230), outline=(90, 90, 90), width=3)
        draw.rectangle([w * 0.45, h * 0.2, w * 0.55, h * 0.45], fill=(170, 170, 175))
        for i in range(3):
            y = h * (0.48 + 0.04 * i)
            draw.ellipse([w * 0.49, y, w * 0.51, y + h * 0.025], fill=(70, 110, 170))
    return image
