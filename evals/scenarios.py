"""Golden scenarios: one YAML file each under evals/scenarios/.
``scenarios_load`` validates every field and says which file and field is wrong.

    id: boiler-not-working-asks-details
    title: A bare "boiler not working" gets a question, not an issue
    tags: [gathering, regression]
    tenant:
      phone_known: true        # false: the number matches no tenant
      properties: 1            # current tenancies for this phone: 0, 1 or 2 (FLAT-1, then HOUSE-7;
                               # their coordinates are in evals/runner.py world_create, for pins)
    setup:                     # optional
      open_issues: [{title: Leaking kitchen tap, category: plumbing, location: kitchen sink}]
      documents: [boiler-flat-1.md]   # from retrieval/demo_documents, ingested for this scenario
      llm_enabled: true        # false: the organization has the assistant switched off
    turns:
      - tenant: "My boiler is not working"   # "" with media for a photo alone
        after: 3d              # optional: time that passes before this turn (s, m, h, d)
        media: ["image/jpeg"]  # optional: attachments by content type (not downloaded)
        photos: [water-near-socket.jpg]  # optional: image files from evals/scenarios/media/, stored as downloaded
        voice: "it's the boiler again"   # optional: a voice note, transcribed to this text before the turn
        voice_failed: true     # optional: a voice note the transcriber could not read
        twilio: {MessageType: location, Latitude: "53.7960", Longitude: "-1.5470"}  # optional: more posted fields
        model:                 # optional: the scripted answer(s) in replay mode, in order; a refused
          tool: ask_for_details  # call is answered with the next one
          input: {question: "Is there an error code on the display?"}
        expect:
          tools: [ask_for_details]     # acceptable final choices (also fallback, flag_off, paused)
          not_tools: [create_issue]
          gathering_state_after: gathering_details
          identity_status_after: confirmed
          emergency: false             # was an emergency alert raised in this turn?
          emergency_verdict: dismissed # live only: what the model check should decide (confirmed, dismissed)
          reply_contains: ["error code"]
          notes: why this is right
    end:
      issues_created: 0
      escalated: false
      emergency_alert: false

A turn without ``model`` is replayed as a model would answer it
(``evals/replay_inputs.py``): one answer per tool of ``expect.tools``, in
order, each with an input derived from the conversation (the address from the
tenant's words, the candidate property, the issue's title, description,
location and photo from the report's messages), so when gating refuses the
first the next is tried; after an accepted ``confirm_property`` the turn goes
on and the next answers continue it. A first expectation of ``fallback`` plays
an outage; ``flag_off`` and ``paused`` need no model call.
``expect.emergency: true`` also stands for the model judging the report an
emergency where no alert was raised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings

from conversations.models import GatheringState, IdentityStatus
from orchestration.tool_definitions import SCHEMAS, TOOL_NAMES

SCENARIO_DIR = Path(settings.BASE_DIR) / "evals" / "scenarios"
MEDIA_DIR = SCENARIO_DIR / "media"
OUTCOMES = ["fallback", "flag_off", "paused"]  # what a turn without a tool call ends in
VERDICTS = ["confirmed", "dismissed"]  # what the model check of a keyword alert may decide
DURATION = re.compile(r"^(\d+)([smhd])$")


class ScenarioError(ValueError):
    pass


@dataclass
class Expect:
    tools: list[str] = field(default_factory=list)
    not_tools: list[str] = field(default_factory=list)
    gathering_state_after: str | None = None
    identity_status_after: str | None = None
    emergency: bool | None = None
    emergency_verdict: str | None = None  # checked where the model check ran (live mode)
    reply_contains: list[str] = field(default_factory=list)
    notes: str = ""


@dataclass
class Turn:
    tenant: str
    after: timedelta | None = None
    media: list[str] = field(default_factory=list)
    photos: list[str] = field(default_factory=list)  # files in MEDIA_DIR
    voice: str | None = None  # a voice note's transcript
    voice_failed: bool = False
    twilio: dict[str, str] = field(default_factory=dict)
    model: list[dict] = field(default_factory=list)  # scripted answers for this turn, in order
    expect: Expect = field(default_factory=Expect)


@dataclass
class Scenario:
    id: str
    path: Path
    title: str = ""
    tags: list[str] = field(default_factory=list)
    phone_known: bool = True
    properties: int = 1
    open_issues: list[dict] = field(default_factory=list)
    documents: list[str] = field(default_factory=list)
    llm_enabled: bool = True
    turns: list[Turn] = field(default_factory=list)
    end: dict[str, Any] = field(default_factory=dict)


def duration_parse(value: str, where: str) -> timedelta:
    match = DURATION.match(str(value).strip())
    if not match:
        raise ScenarioError(f"{where}: 'after' must look like 30s, 10m, 2h or 3d, not {value!r}")
    amount, unit = int(match.group(1)), match.group(2)
    return timedelta(**{{"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[unit]: amount})


def _check_keys(data: dict, allowed: set[str], where: str) -> None:
    unknown = set(data) - allowed
    if unknown:
        raise ScenarioError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")


def _tools(value, where: str, allowed: list[str]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ScenarioError(f"{where}: must be a list of tool names")
    wrong = [v for v in value if v not in allowed]
    if wrong:
        raise ScenarioError(f"{where}: unknown tool(s) {', '.join(wrong)}; known: {', '.join(allowed)}")
    return value


def _model(value, where: str) -> list[dict]:
    calls = value if isinstance(value, list) else [value]
    for n, item in enumerate(calls):
        spot = f"{where}[{n}]"
        if not isinstance(item, dict):
            raise ScenarioError(f"{spot}: must be a mapping with tool and input")
        if "error" in item:
            continue
        _check_keys(item, {"tool", "input"}, spot)
        if item.get("tool") not in SCHEMAS:
            raise ScenarioError(f"{spot}.tool: unknown tool {item.get('tool')!r}")
        if not isinstance(item.get("input", {}), dict):
            raise ScenarioError(f"{spot}.input: must be a mapping")
    return calls


def _strings(value: Any, spot: str) -> list[str]:
    """A YAML list of strings; a bare string would be read as its letters."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ScenarioError(f"{spot}: a list of strings, such as [emergency]")
    return value


def scenario_parse(data: Any, path: Path) -> Scenario:
    where = path.name
    if not isinstance(data, dict):
        raise ScenarioError(f"{where}: a scenario is a YAML mapping")
    _check_keys(data, {"id", "title", "tags", "tenant", "setup", "turns", "end"}, where)
    for required in ("id", "tenant", "turns"):
        if required not in data:
            raise ScenarioError(f"{where}: '{required}' is required")
    tenant = data["tenant"]
    if not isinstance(tenant, dict):
        raise ScenarioError(f"{where}.tenant: must be a mapping")
    _check_keys(tenant, {"phone_known", "properties"}, f"{where}.tenant")
    properties = tenant.get("properties", 1)
    if properties not in (0, 1, 2):
        raise ScenarioError(f"{where}.tenant.properties: 0, 1 or 2, not {properties!r}")
    setup = data.get("setup") or {}
    _check_keys(setup, {"open_issues", "documents", "llm_enabled"}, f"{where}.setup")
    scenario = Scenario(
        id=str(data["id"]),
        path=path,
        title=str(data.get("title", "")),
        tags=_strings(data.get("tags"), f"{where}.tags"),
        phone_known=bool(tenant.get("phone_known", True)),
        properties=properties,
        open_issues=list(setup.get("open_issues") or []),
        documents=list(setup.get("documents") or []),
        llm_enabled=bool(setup.get("llm_enabled", True)),
        end=dict(data.get("end") or {}),
    )
    _check_keys(scenario.end, {"issues_created", "escalated", "emergency_alert"}, f"{where}.end")
    if not isinstance(data["turns"], list) or not data["turns"]:
        raise ScenarioError(f"{where}.turns: a non-empty list")
    for n, raw in enumerate(data["turns"]):
        spot = f"{where}.turns[{n}]"
        if not isinstance(raw, dict) or "tenant" not in raw:
            raise ScenarioError(f"{spot}: a mapping with at least 'tenant' (\"\" for media only)")
        _check_keys(
            raw, {"tenant", "after", "media", "photos", "voice", "voice_failed", "twilio", "model", "expect"}, spot
        )
        twilio = raw.get("twilio") or {}
        if not isinstance(twilio, dict):
            raise ScenarioError(f"{spot}.twilio: a mapping of Twilio field names to values")
        photos = [str(name) for name in raw.get("photos") or []]
        if missing := [name for name in photos if not (MEDIA_DIR / name).is_file()]:
            raise ScenarioError(f"{spot}.photos: no such file in {MEDIA_DIR}: {', '.join(missing)}")
        if raw.get("voice") is not None and raw.get("voice_failed"):
            raise ScenarioError(f"{spot}: a voice note is either transcribed (voice) or not (voice_failed)")
        expect = raw.get("expect") or {}
        _check_keys(
            expect,
            {
                "tools",
                "not_tools",
                "gathering_state_after",
                "identity_status_after",
                "emergency",
                "emergency_verdict",
                "reply_contains",
                "notes",
            },
            f"{spot}.expect",
        )
        for key, choices in (
            ("gathering_state_after", GatheringState.values),
            ("identity_status_after", IdentityStatus.values),
            ("emergency_verdict", VERDICTS),
        ):
            if key in expect and expect[key] not in choices:
                raise ScenarioError(f"{spot}.expect.{key}: one of {', '.join(choices)}, not {expect[key]!r}")
        scenario.turns.append(
            Turn(
                tenant=str(raw["tenant"] or ""),
                after=duration_parse(raw["after"], spot) if raw.get("after") else None,
                media=list(raw.get("media") or []),
                photos=photos,
                voice=str(raw["voice"]) if raw.get("voice") is not None else None,
                voice_failed=bool(raw.get("voice_failed")),
                twilio={str(k): str(v) for k, v in twilio.items()},
                model=_model(raw["model"], f"{spot}.model") if raw.get("model") else [],
                expect=Expect(
                    tools=_tools(expect.get("tools", []), f"{spot}.expect.tools", TOOL_NAMES + OUTCOMES),
                    not_tools=_tools(expect.get("not_tools", []), f"{spot}.expect.not_tools", TOOL_NAMES + OUTCOMES),
                    gathering_state_after=expect.get("gathering_state_after"),
                    identity_status_after=expect.get("identity_status_after"),
                    emergency=expect.get("emergency"),
                    emergency_verdict=expect.get("emergency_verdict"),
                    reply_contains=_strings(expect.get("reply_contains"), f"{spot}.expect.reply_contains"),
                    notes=str(expect.get("notes", "")),
                ),
            )
        )
    if not scenario.end and (
        idle := [n for n, raw in enumerate(data["turns"]) if not set(raw.get("expect") or {}) - {"notes"}]
    ):
        raise ScenarioError(
            f"{where}.turns{idle}: no expectation and no 'end' block: say what the turn must do (tools, emergency, ...)"
        )
    return scenario


def scenarios_load(paths: list[Path] | None = None, *, tag: str | None = None) -> list[Scenario]:
    files: list[Path] = []
    for path in paths or [SCENARIO_DIR]:
        files += sorted(path.glob("*.yaml")) if path.is_dir() else [path]
    scenarios = []
    seen: dict[str, Path] = {}
    for file in files:
        try:
            data = yaml.safe_load(file.read_text())
        except yaml.YAMLError as exc:
            raise ScenarioError(f"{file.name}: not valid YAML: {exc}") from exc
        scenario = scenario_parse(data, file)
        if scenario.id in seen:
            raise ScenarioError(f"{file.name}: id {scenario.id!r} is also used by {seen[scenario.id].name}")
        seen[scenario.id] = file
        if tag is None or tag in scenario.tags:
            scenarios.append(scenario)
    return scenarios
