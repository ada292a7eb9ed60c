"""Shared set-up for benchmark scripts: Django on the project's settings, its
own Celery key prefix, and a throwaway database on the embedded PostgreSQL
(or DATABASE_URL) so a benchmark never touches development data."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def django_start(**env: str) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("CELERY_KEY_PREFIX", f"bench-{uuid.uuid4().hex[:8]}:")
    os.environ.setdefault("LOG_LEVEL", "ERROR")
    os.environ.update(env)
    import django

    django.setup()


def throwaway_database():
    from evals.throwaway import throwaway_database as database

    return database()
