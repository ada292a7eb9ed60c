from typing import Any

class Response:
    status_code: int
    text: str
    headers: Any
    ok: bool
    def __init__(self, status_code: int, text: str, headers: Any | None = None) -> None: ...
