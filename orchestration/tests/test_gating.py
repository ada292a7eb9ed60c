"""Walk the transition table: every tool in every state."""

import pytest

from conversations.models import GatheringState, IdentityStatus
from orchestration.gating import IDENTITY_TRANSITIONS, TRANSITIONS, Snapshot, create_issue_possible, rejection
from orchestration.testing.fixtures import issue_call
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
    snapshot = Snapshot(identity=identity, gathering=gathering, photo_received=True, property_code="FLAT-1")
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
        # After an issue, a new problem starts over: no fresh photo, no details -> too early.
        ("provided", "issue_created", False, False, False),
        ("declined", "issue_created", False, False, False),
        ("provided", "issue_created", True, False, True),
        ("not_needed", "issue_created", False, True, True),
    ],
)
def test_create_issue_photo_rules(photo, gathering, photo_received, emergency, allowed):
    snapshot = Snapshot(
        identity="active", gathering=gathering, photo_received=photo_received, emergency=emergency, property_code="F-1"
    )
    assert (rejection("create_issue", {**ISSUE, "photo": photo}, snapshot) is None) == allowed


def test_schema_errors_are_readable():
    assert tool_input_errors("respond", {}) == ["missing 'message'"]
    assert "'urgency' must be one of emergency, urgent, routine" in tool_input_errors(
        "create_issue", {**ISSUE, "urgency": "asap"}
    )
    assert tool_input_errors("nope", {}) == ["unknown tool 'nope'"]


def test_create_issue_needs_a_confirmed_property():
    snapshot = Snapshot(identity="confirmed", gathering="awaiting_photo", photo_received=True)
    assert "confirm_property" in rejection("create_issue", ISSUE, snapshot)


def test_a_number_with_tenancies_cannot_search_other_addresses():
    own = Snapshot(identity="identified", gathering="idle", property_codes=("FLAT-2", "HOUSE-7"))
    assert "FLAT-2, HOUSE-7" in rejection("find_property", {"address": "Flat 3, 14 Harbour Street"}, own)
    unknown = Snapshot(identity="unidentified", gathering="idle")
    assert rejection("find_property", {"address": "Flat 3, 14 Harbour Street"}, unknown) is None


@pytest.mark.parametrize(
    ("codes", "candidate", "tool_input", "allowed"),
    [
        # A tenant with tenancies: only their own codes, never a candidate from elsewhere.
        (("FLAT-2", "HOUSE-7"), "", {"confirmed": True, "property_code": "HOUSE-7"}, True),
        (("FLAT-2", "HOUSE-7"), "", {"confirmed": True, "property_code": "FLAT-3"}, False),
        (("FLAT-2", "HOUSE-7"), "FLAT-3", {"confirmed": True}, False),
        (("FLAT-2", "HOUSE-7"), "FLAT-3", {"confirmed": True, "property_code": "FLAT-3"}, False),
        (("FLAT-2", "HOUSE-7"), "", {"confirmed": False}, False),
        # An unknown number: only the candidate matched from the address they gave.
        ((), "FLAT-3", {"confirmed": True}, True),
        ((), "FLAT-3", {"confirmed": True, "property_code": "FLAT-3"}, True),
        ((), "FLAT-3", {"confirmed": True, "property_code": "FLAT-4"}, False),
        ((), "", {"confirmed": True}, False),
        ((), "FLAT-3", {"confirmed": False}, True),
    ],
)
def test_confirm_property_only_within_the_tenants_reach(codes, candidate, tool_input, allowed):
    snapshot = Snapshot(identity="identified", gathering="idle", property_codes=codes, candidate_code=candidate)
    assert (rejection("confirm_property", tool_input, snapshot) is None) == allowed


@pytest.mark.parametrize(
    ("codes", "tool_input", "allowed"),
    [
        (("FLAT-2", "HOUSE-7"), {"confirmed": True, "property_code": "HOUSE-7"}, True),
        (("FLAT-2", "HOUSE-7"), {"confirmed": True, "property_code": "FLAT-2"}, False),  # where it is already
        (("FLAT-2", "HOUSE-7"), {"confirmed": True, "property_code": "FLAT-3"}, False),  # not theirs
        (("FLAT-2", "HOUSE-7"), {"confirmed": False}, False),
        (("FLAT-2",), {"confirmed": True, "property_code": "FLAT-2"}, False),  # one home: nothing to move to
        ((), {"confirmed": True, "property_code": "FLAT-2"}, False),  # an unknown number's confirmed address
    ],
)
@pytest.mark.parametrize("identity", ["confirmed", "active"])
def test_a_confirmed_tenant_moves_only_to_another_of_their_own_homes(codes, tool_input, allowed, identity):
    snapshot = Snapshot(identity=identity, gathering="idle", property_codes=codes, property_code="FLAT-2")
    assert (rejection("confirm_property", tool_input, snapshot) is None) == allowed


@pytest.mark.parametrize(
    ("gathering", "emergency", "allowed"),
    [
        ("idle", False, True),
        ("issue_created", False, True),
        ("gathering_details", False, False),  # the report in progress would go with it
        ("awaiting_photo", False, False),
        ("idle", True, False),  # an emergency's issue is filed where it is: a person moves it
    ],
)
def test_a_move_between_homes_happens_between_reports_and_never_with_an_emergency(gathering, emergency, allowed):
    snapshot = Snapshot(
        identity="active",
        gathering=gathering,
        emergency=emergency,
        property_codes=("FLAT-2", "HOUSE-7"),
        property_code="FLAT-2",
    )
    move = {"confirmed": True, "property_code": "HOUSE-7"}
    assert (rejection("confirm_property", move, snapshot) is None) == allowed


@pytest.mark.parametrize(
    ("snapshot", "possible"),
    [
        (Snapshot(identity="identified", gathering="awaiting_photo", photo_received=True), False),
        (Snapshot(identity="confirmed", gathering="gathering_details", property_code="F-1"), False),
        (Snapshot(identity="confirmed", gathering="gathering_details", property_code="F-1", photo_received=True), True),
        (Snapshot(identity="confirmed", gathering="gathering_details", property_code="F-1", emergency=True), True),
        (Snapshot(identity="confirmed", gathering="awaiting_photo", property_code="F-1"), True),  # may be declined
    ],
)
def test_create_issue_possible_follows_gating(snapshot, possible):
    assert create_issue_possible(snapshot) == possible
