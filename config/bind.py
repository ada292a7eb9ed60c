"""``BIND``, the address ``make run`` listens on, as a URL a client on this
machine can open."""

from __future__ import annotations

from urllib.parse import urlsplit

# Addresses that mean "every interface": a client reaches them on loopback.
_EVERY_INTERFACE = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "[::]": "[::1]", "::": "[::1]"}  # noqa: S104


def local_base_url(bind: str) -> str:
    """``127.0.0.1:8001`` -> ``http://127.0.0.1:8001``; ``0.0.0.0:8001`` ->
    ``http://127.0.0.1:8001``. Takes gunicorn's ``--bind`` forms HOST:PORT,
    [IPv6]:PORT and HOST (port 8000)."""
    host, sep, port = bind.rpartition(":")
    if not sep or host.endswith(":") or (host.startswith("[") != host.endswith("]")):
        host, port = bind, "8000"  # no port given ("localhost", "[::1]")
    host = _EVERY_INTERFACE.get(host, host)
    return f"http://{host}:{port}"


def url_host(url: str) -> str:
    """The host of ``url`` as ``ALLOWED_HOSTS`` names it: ``https://abc.ngrok.app/x``
    -> ``abc.ngrok.app``, ``http://[::1]:8000`` -> ``[::1]``; empty for no URL."""
    parts = urlsplit(url)
    if not parts.hostname:
        return ""
    return f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
