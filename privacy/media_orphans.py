"""Tenants' files that no row points at any more, deleted.

Erasure and retention delete a file after their transaction commits; a
worker that dies in between, or a storage that refuses, leaves the file with
no row to find it by, and so does a download whose row was claimed by
another run. Such a file still holds a tenant's photo or voice. Daily, with
the retention run, every file under the media folder that no ``Media`` row
names and that is older than ``MEDIA_ORPHAN_GRACE_HOURS`` (a download writes
its file moments before its row commits) is deleted. The folders are read one
month at a time, each against the rows of that month."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime, timedelta

from django.conf import settings
from django.core.files.storage import Storage
from django.utils import timezone

from conversations.models import Media

logger = logging.getLogger(__name__)

MEDIA_FOLDER = "whatsapp"  # Media.file's upload_to: whatsapp/%Y/%m/


def media_orphans_delete(*, dry_run: bool = False, now: datetime | None = None) -> list[str]:
    """Delete (or, dry, only list) the orphaned files; returns their names."""
    storage = Media._meta.get_field("file").storage
    cutoff = (now or timezone.now()) - timedelta(hours=settings.MEDIA_ORPHAN_GRACE_HOURS)
    orphans = []
    for folder, names in _folders(storage, MEDIA_FOLDER):
        named = set(Media.objects.filter(file__startswith=f"{folder}/").values_list("file", flat=True))
        for name in names:
            if name in named or _modified(storage, name) >= cutoff:
                continue
            orphans.append(name)
            if not dry_run:
                try:
                    storage.delete(name)
                except Exception:  # one file the storage refuses must not keep the others
                    logger.exception("orphaned media file %s could not be deleted", name)
    if orphans:
        logger.info("%s %d orphaned media file(s)", "found" if dry_run else "deleted", len(orphans))
    return orphans


def _folders(storage: Storage, top: str) -> Iterator[tuple[str, list[str]]]:
    try:
        folders, files = storage.listdir(top)
    except FileNotFoundError:
        return
    if files:
        yield top, [f"{top}/{name}" for name in files]
    for folder in sorted(folders):
        yield from _folders(storage, f"{top}/{folder}")


def _modified(storage: Storage, name: str) -> datetime:
    try:
        return storage.get_modified_time(name)
    except Exception:  # gone since the listing, or a storage that cannot say: treated as new, never deleted
        return timezone.now()
