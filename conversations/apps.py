from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class ConversationsConfig(AppConfig):
    name = "conversations"
    verbose_name = "WhatsApp conversations"

    def ready(self) -> None:
        from conversations.inbound import routes
        from properties.models import Organization, WhatsAppNumber

        # An organization or number edited in this process routes anew at once.
        for model in (Organization, WhatsAppNumber):
            post_save.connect(routes.clear, sender=model, dispatch_uid=f"routes-clear-save-{model.__name__}")
            post_delete.connect(routes.clear, sender=model, dispatch_uid=f"routes-clear-delete-{model.__name__}")
