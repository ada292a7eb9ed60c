import logging

from twilio.http.response import Response

class TwilioHttpClient:
    timeout: float | None
    def __init__(
        self,
        pool_connections: bool = True,
        request_hooks: dict[str, object] | None = None,
        timeout: float | None = None,
        logger: logging.Logger = ...,
        proxy: dict[str, str] | None = None,
        max_retries: int | None = None,
    ) -> None: ...
    def request(
        self,
        method: str,
        url: str,
        params: dict[str, object] | None = None,
        data: dict[str, object] | None = None,
        headers: dict[str, str] | None = None,
        auth: tuple[str, str] | None = None,
        timeout: float | None = None,
        allow_redirects: bool = False,
    ) -> Response: ...
