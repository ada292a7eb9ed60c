"""Walk the transition table: every tool in every state."""

import pytest

from conversations.models import GatheringState, IdentityStatus
from orchestration.gating import IDENTITY_TRANSITIONS, TRANSITIONS, Snapshot, rejection
from orchestration.tests.conftest import issue_call
from orchestration.tool_definitions import TOOL_NAMES, tool_input_errors

ISSUE = issue_call()["input"]


def test_every_tool_has_a_row_and_every_state_is_known():
    assert set(TRANSITIONS) == set(TOOL_NAMES)
    for moves in TRANSITIONS.values():
        assert set(moves) <= set(GatheringState.values)
        assert set(moves.values()) <= set(GatheringState.values)
    for moves in IDENTITY_TRANSITIONS.values():
        assert set(moves) | set(moves.values()) <= set(IdentityStatus.values)


@pytest.mark.parametrize("gathering", GatheringState.values)
@pytest.mark.parametrize("identity", IdentityStatus.values)
def test_create_issue_needs_a_confirmed_identity(identity, gathering):
    snapshot = Snapshot(identity=identity, gathering=gathering, photo_received=True)
    allowed = rejection("create_issue", ISSUE, snapshot) is None
    assert allowed == (identity in ("confirmed", "active"))


@pytest.mark.parametrize(
    ("gathering", "allowed"),
    [("idle", False), ("gathering_details", True), ("awaiting_photo", True), ("issue_created", False)],
)
def test_ask_for_photo_only_after_details(gathering, allowed):
    snapshot = Snapshot(identity="confirmed", gathering=gathering)
    assert (rejection("ask_for_photo", {"message": "Photo?"}, snapshot) is None) == allowed


@pytest.mark.parametrize(
    ("photo", "gathering", "photo_received", "emergency", "allowed"),
    [
        ("provided", "gathering_details", False, False, False),
        ("provided", "gathering_details", True, False, True),
        ("declined", "gathering_details", False, False, False),
        ("declined", "awaiting_photo", False, False, True),
        ("not_needed", "gathering_details", False, False, False),
        ("not_needed", "idle", False, True, True),
        ("provided", "idle", True, False, True),
    ],
)
def test_create_issue_photo_rules(photo, gathering, photo_received, emergency, allowed):
    snapshot = Snapshot(identity="active", gathering=gathering, photo_received=photo_received, emergency=emergency)
    assert (rejection("create_issue", {**ISSUE, "photo": photo}, snapshot) is None) == allowed


def test_schema_errors_are_readable():
    assert tool_input_errors("respond", {}) == ["missing 'message'"]
    assert "'urgency' must be one of emergency, urgent, routine" in tool_input_errors(
        "create_issue", {**ISSUE, "urgency": "asap"}
    )
    assert tool_input_errors("nope", {}) == ["unknown tool 'nope'"]
