from django.apps import AppConfig


class IssuesConfig(AppConfig):
    name = "issues"
    verbose_name = "Repairs"

    def ready(self) -> None:
        from django.db.models.signals import post_save

        from issues.deadlines import policies_default_create
        from properties.models import Organization

        def _policies(sender, instance, created, raw=False, **kwargs):
            if created and not raw:
                policies_default_create(organization=instance)

        # weak=False: the receiver is a local function, kept alive only by the signal.
        post_save.connect(_policies, sender=Organization, weak=False, dispatch_uid="issues.deadline_policies_default")
