from twilio.http.http_client import TwilioHttpClient

class MessageInstance:
    sid: str | None
    status: str | None
    error_code: int | None
    error_message: str | None

class MessageList:
    def create(self, to: str, **kwargs: object) -> MessageInstance: ...

class Client:
    def __init__(
        self,
        username: str | None = None,
        password: str | None = None,
        account_sid: str | None = None,
        region: str | None = None,
        http_client: TwilioHttpClient | None = None,
    ) -> None: ...
    @property
    def messages(self) -> MessageList: ...
