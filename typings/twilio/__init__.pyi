# The part of the Twilio SDK this project uses, typed: the SDK has annotations
# but no py.typed marker, so mypy would see it as Any. Signatures follow
# twilio 9.x (requirements/base.txt).
