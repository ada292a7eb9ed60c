"""Issues moved from ``properties`` and emergencies from ``orchestration`` by
state-only migrations. A database filled under the old layout keeps every row
going forward, and again going back."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE_MOVE = [
    ("issues", None),
    ("emergencies", None),
    ("properties", "0003_whatsapp_number_e164"),
    ("orchestration", "0005_emergency_alert_one_per_message"),
    ("conversations", "0003_conversation_language"),
    ("contenttypes", "0002_remove_content_type_name"),
]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    # The state at the named nodes; an app migrated to zero ("None") is simply absent.
    return executor.loader.project_state([t for t in targets if t[1] is not None]).apps


def _latest():
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def _fill(old):
    """Rows of every moved model, written through the models as they were."""
    org = old.get_model("properties", "Organization").objects.create(name="Old Lettings", slug="old", country="GB")
    home = old.get_model("properties", "Property").objects.create(organization=org, code="H1", address="1 Old Road")
    tenant = old.get_model("properties", "Tenant").objects.create(organization=org, name="Ann", phone="+447700900001")
    conversation = old.get_model("conversations", "Conversation").objects.create(
        organization=org, phone="+447700900001", tenant=tenant, property=home
    )
    message = old.get_model("conversations", "Message").objects.create(
        organization=org,
        conversation=conversation,
        direction="inbound",
        status="received",
        body="I smell gas",
        provider_sid="SM1",
    )
    media = old.get_model("conversations", "Media").objects.create(
        message=message, index=0, provider_url="https://api.twilio.com/m/1", content_type="image/jpeg"
    )
    issue = old.get_model("properties", "Issue").objects.create(
        organization=org, property=home, tenant=tenant, conversation=conversation, reference="R-OLD-1", title="Gas"
    )
    old.get_model("properties", "IssueUpdate").objects.create(issue=issue, author="system", body="noted")
    old.get_model("properties", "IssuePhoto").objects.create(issue=issue, media=media)
    old.get_model("orchestration", "EmergencyRule").objects.create(
        organization=org, language="en", phrase="whiff of gas", category="gas"
    )
    old.get_model("orchestration", "SafetyMessage").objects.create(
        organization=org, country="GB", category="gas", language="en", body="Leave now."
    )
    old.get_model("orchestration", "EmergencyAlert").objects.create(
        organization=org, conversation=conversation, message=message, category="gas", safety_reply="Leave now."
    )


MOVED = {
    ("properties", "issues"): ["Issue", "IssueUpdate", "IssuePhoto"],
    ("orchestration", "emergencies"): ["EmergencyRule", "SafetyMessage", "EmergencyAlert"],
}


def _rows(apps, *, new: bool) -> dict[str, int]:
    counts = {}
    for (old_label, new_label), names in MOVED.items():
        for name in names:
            model = apps.get_model(new_label if new else old_label, name)
            rows = model.objects.all()
            if name in ("EmergencyRule", "SafetyMessage"):  # later migrations seed more built-in ones
                rows = rows.filter(organization__isnull=False)
            counts[name] = rows.count()
    return counts


@pytest.mark.django_db(transaction=True)
def test_rows_survive_the_move_forward_and_back():
    old = _migrate(BEFORE_MOVE)
    try:
        _fill(old)
        ContentType = old.get_model("contenttypes", "ContentType")
        issue_type_id = ContentType.objects.get_or_create(app_label="properties", model="issue")[0].pk
        before = _rows(old, new=False)

        new = _migrate(_latest())
        assert _rows(new, new=True) == before
        assert new.get_model("issues", "Issue").objects.get().reference == "R-OLD-1"
        assert new.get_model("issues", "IssuePhoto").objects.get().media.provider_url == "https://api.twilio.com/m/1"
        assert new.get_model("emergencies", "EmergencyAlert").objects.get().message.body == "I smell gas"
        # The content type moved rather than a new one appearing: permissions and admin history follow it.
        assert new.get_model("contenttypes", "ContentType").objects.get(pk=issue_type_id).app_label == "issues"

        back = _migrate(BEFORE_MOVE)
        assert _rows(back, new=False) == before
        assert back.get_model("contenttypes", "ContentType").objects.get(pk=issue_type_id).app_label == "properties"
    finally:
        _migrate(_latest())
