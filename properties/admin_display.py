"""Small HTML pieces the admin pages share: badges, ages, photo thumbnails."""

from __future__ import annotations

import datetime
import json

from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

ADMIN_CSS = "workplace/admin.css"


def badge(text: str, *classes: str):
    return format_html('<span class="badge {}">{}</span>', " ".join(classes), text)


def age(moment: datetime.datetime | None, *, now: datetime.datetime | None = None) -> str:
    """'12 min', '5 h', '3 d': how long ago, short enough for a list column."""
    if moment is None:
        return "—"
    seconds = max(0, int(((now or timezone.now()) - moment).total_seconds()))
    if seconds < 3600:
        return f"{max(1, seconds // 60)} min"
    if seconds < 48 * 3600:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"


def media_file_url(media) -> str:
    return reverse("admin:conversations_media_file", args=[media.pk])


def media_thumbnail(media, *, css: str = "thumb"):
    """An image served through the scoped admin view (tenant photos are never public)."""
    if not media.file:
        return badge(media.get_download_state_display(), "muted")
    if not (media.content_type or "").startswith("image/"):
        return format_html('<a href="{}">{}</a>', media_file_url(media), media.content_type or "file")
    url = media_file_url(media)
    return format_html(
        '<a href="{}" target="_blank"><img class="{}" src="{}" alt="photo {}"></a>', url, css, url, media.pk
    )


def thumbnails(media_list, *, limit: int = 3):
    shown = list(media_list)[:limit]
    html = format_html_join("", "{}", ((media_thumbnail(m),) for m in shown))
    extra = len(list(media_list)) - len(shown)
    if extra > 0:
        html = format_html("{} <span class='muted'>+{}</span>", html, extra)
    return html or "—"


def pretty_json(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)
