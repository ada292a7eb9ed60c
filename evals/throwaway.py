"""A throwaway database for commands that must never touch real data (the
golden scenarios, benchmarks): created like Django's test runner creates its
database, dropped afterwards. Each one has its own name, so two of these
commands running at once on the same server never drop each other's."""

from __future__ import annotations

import os
import uuid
from contextlib import contextmanager


@contextmanager
def throwaway_database():
    from django.db import connection
    from django.test.utils import setup_test_environment, teardown_test_environment

    test_settings = connection.settings_dict.setdefault("TEST", {})
    test_settings["NAME"] = f"throwaway_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        yield
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        teardown_test_environment()
