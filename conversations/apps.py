from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save, pre_delete, pre_save


class ConversationsConfig(AppConfig):
    name = "conversations"
    verbose_name = "WhatsApp conversations"

    def ready(self) -> None:
        from conversations.inbound import routes
        from conversations.number_change import on_tenant_deleting, on_tenant_saving
        from properties.models import Organization, Tenant, WhatsAppNumber

        # An organization or number edited in this process routes anew at once.
        for model in (Organization, WhatsAppNumber):
            post_save.connect(routes.clear, sender=model, dispatch_uid=f"routes-clear-save-{model.__name__}")
            post_delete.connect(routes.clear, sender=model, dispatch_uid=f"routes-clear-delete-{model.__name__}")
        # A tenant's number changed, or the tenant deleted: their conversation from the old number is retired
        # (before the tenant's row is written: conversations are locked first, as everywhere).
        pre_save.connect(on_tenant_saving, sender=Tenant, dispatch_uid="conversations-retire-tenant-saving")
        pre_delete.connect(on_tenant_deleting, sender=Tenant, dispatch_uid="conversations-retire-tenant-deleting")
