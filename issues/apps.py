from django.apps import AppConfig


class IssuesConfig(AppConfig):
    name = "issues"
    verbose_name = "Repairs"

    def ready(self) -> None:
        from django.db.models.signals import post_save

        from issues.deadlines import policies_default_create
        from issues.dispatch import contractor_offers_withdraw
        from properties.models import Contractor, Organization

        def _policies(sender, instance, created, raw=False, **kwargs):
            if created and not raw:
                policies_default_create(organization=instance)

        # weak=False: the receiver is a local function, kept alive only by the signal.
        post_save.connect(_policies, sender=Organization, weak=False, dispatch_uid="issues.deadline_policies_default")

        def _inactive(sender, instance, raw=False, **kwargs):
            # Saved inactive (admin, API or shell): their open offers go back to the landlord.
            if not raw and not instance.active:
                contractor_offers_withdraw(contractor=instance)

        post_save.connect(_inactive, sender=Contractor, weak=False, dispatch_uid="issues.contractor_offers_withdraw")
