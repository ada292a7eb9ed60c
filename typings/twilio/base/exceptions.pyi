class TwilioException(Exception): ...

class TwilioRestException(TwilioException):
    uri: str
    status: int
    msg: str
    code: int | None
    method: str
    details: object | None
    def __init__(
        self,
        status: int,
        uri: str,
        msg: str = "",
        code: int | None = None,
        method: str = "GET",
        details: object | None = None,
    ) -> None: ...
