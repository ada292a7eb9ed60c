"""A throwaway database for commands that must never touch real data (the
golden scenarios, benchmarks): created like Django's test runner creates its
database, dropped afterwards."""

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def throwaway_database():
    from django.db import connection
    from django.test.utils import setup_test_environment, teardown_test_environment

    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        yield
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        teardown_test_environment()
