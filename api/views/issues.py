"""Issues: list with filters, read one, change its status (with the same
recorded update and tenant notification as the admin actions)."""

from __future__ import annotations

import datetime
from typing import cast

import django_filters
from django.db.models import Q
from django.http import StreamingHttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import generics, serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from api.filtering import OrganizationFilterSet
from api.inputs import StrictInput
from api.scoping import OrganizationScopedApi
from issues.deadlines import ClockError, clock_meet, clock_state
from issues.dispatch import DispatchError, contractors_suggest, job_live, job_offer, job_withdraw
from issues.export import csv_lines, issue_rows
from issues.models import Appointment, ClockKind, Issue, IssueClock, IssueUpdate, Job
from issues.selectors import first_due, issue_list, issues_by_deadline, with_next_due
from issues.services import IssueLinkError, issue_number_link
from issues.status import NOTE_MAX_CHARS, IssueStatusError, issue_status_change
from issues.summary import (
    SUMMARY_MAX_CHARS,
    SummaryError,
    summary_draft,
    summary_last_sent,
    summary_owed,
    summary_recipients,
    summary_send,
)
from properties.models import Contractor
from properties.working_time import zone_get


class IssueFilter(OrganizationFilterSet):
    status = django_filters.MultipleChoiceFilter(choices=Issue.Status.choices)
    urgency = django_filters.MultipleChoiceFilter(choices=Issue.Urgency.choices)
    category = django_filters.MultipleChoiceFilter(choices=Issue.Category.choices)
    open = django_filters.BooleanFilter(method="filter_open", label="Only open (true) or only done (false) issues")
    # Plain ids, not model choices: an id outside the caller's organizations
    # simply matches nothing, the same as an id that does not exist.
    property = django_filters.NumberFilter(field_name="property_id")
    tenant = django_filters.NumberFilter(field_name="tenant_id")
    tenant_unverified = django_filters.BooleanFilter(label="Only issues from numbers with no tenancy there (true)")
    conversation = django_filters.NumberFilter(field_name="conversation_id")
    created_after = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="lt")
    q = django_filters.CharFilter(method="filter_q", label="Search reference, title and description")
    deadline = django_filters.ChoiceFilter(
        choices=[("overdue", "overdue"), ("soon", "due within 24 hours"), ("running", "any clock running")],
        method="filter_deadline",
        label="Issues whose first unmet deadline is overdue, due within 24 hours, or running at all",
    )

    class Meta:
        model = Issue
        fields: list[str] = []

    def filter_open(self, queryset, name, value):
        if value is None:
            return queryset
        condition = Q(status__in=Issue.OPEN_STATUSES)
        return queryset.filter(condition) if value else queryset.exclude(condition)

    def filter_deadline(self, queryset, name, value):
        return issues_by_deadline(queryset, value)

    def filter_q(self, queryset, name, value):
        return queryset.filter(Q(reference__iexact=value) | Q(title__icontains=value) | Q(description__icontains=value))


class PropertyBrief(serializers.Serializer):
    id = serializers.IntegerField()
    code = serializers.CharField()
    address = serializers.CharField()

    class Meta:
        ref_name = "PropertyBrief"


class TenantBrief(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    phone = serializers.CharField()

    class Meta:
        ref_name = "TenantBrief"


class ClockOutput(serializers.ModelSerializer):
    state = serializers.SerializerMethodField(
        help_text="running, due soon (inside the policy's warning time), overdue, met, met late, or stopped "
        "(the issue is closed)."
    )

    class Meta:
        model = IssueClock
        ref_name = "IssueClock"
        fields = ["kind", "rule", "started_at", "due_at", "met_at", "state", "warned_at", "missed_at"]

    def get_state(self, obj) -> str:
        return clock_state(obj, now=timezone.now(), issue_status=obj.issue.status)


class AppointmentOutput(serializers.ModelSerializer):
    class Meta:
        model = Appointment
        ref_name = "Appointment"
        fields = ["id", "starts_at", "ends_at", "state", "booked_at", "reminded_at", "missed_by"]


class JobOutput(serializers.ModelSerializer):
    contractor_name = serializers.CharField(source="contractor.name")
    appointments = AppointmentOutput(many=True, read_only=True, help_text="The visit times proposed and booked.")

    class Meta:
        model = Job
        ref_name = "Job"
        fields = [
            "id",
            "contractor",
            "contractor_name",
            "state",
            "offered_at",
            "respond_by",
            "responded_at",
            "appointments",
        ]


class IssueOutput(serializers.ModelSerializer):
    property = PropertyBrief()
    tenant = TenantBrief(allow_null=True)
    photos = serializers.SerializerMethodField()
    clocks = ClockOutput(many=True, read_only=True)
    next_due = serializers.SerializerMethodField(help_text="When the first unmet deadline runs out.")

    class Meta:
        model = Issue
        ref_name = "Issue"
        fields = [
            "id",
            "organization",
            "reference",
            "title",
            "description",
            "category",
            "urgency",
            "status",
            "location",
            "photo",
            "photo_findings",
            "scheduled_for",
            "property",
            "tenant",
            "tenant_unverified",
            "conversation",
            "photos",
            "clocks",
            "next_due",
            "fix_asked_at",
            "fix_answer",
            "fix_answered_at",
            "rating",
            "rating_comment",
            "created_at",
            "updated_at",
            "acknowledged_at",
            "resolved_at",
        ]

    def get_next_due(self, obj) -> datetime.datetime | None:
        return first_due(obj)

    def get_photos(self, obj) -> list[dict]:
        return [
            {"media_id": p.media_id, "content_type": p.media.content_type, "download_state": p.media.download_state}
            for p in obj.photos.all()
        ]


class IssueListApi(OrganizationScopedApi, generics.ListAPIView):
    """Issues of your organizations, newest first unless ``ordering`` says otherwise."""

    OutputSerializer = IssueOutput
    serializer_class = OutputSerializer
    filterset_class = IssueFilter
    ordering_fields = ["created_at", "updated_at", "urgency", "status", "reference", "scheduled_for", "next_due"]
    ordering_ranks = {
        "urgency": [
            Issue.Urgency.ROUTINE,
            Issue.Urgency.URGENT,
            Issue.Urgency.EMERGENCY,
        ],  # -urgency: emergencies first
        "status": list(Issue.Status.values),  # the lifecycle's order
    }
    ordering = ["-created_at", "-id"]

    def get_queryset(self):
        queryset = self.selected(issue_list)
        if "next_due" in self.request.query_params.get("ordering", ""):
            queryset = with_next_due(queryset)  # only when ordered by: it costs every row
        return queryset


class IssueDetailApi(OrganizationScopedApi, APIView):
    class InputSerializer(StrictInput):
        status = serializers.ChoiceField(choices=Issue.Status.choices)
        scheduled_for = serializers.DateField(required=False, allow_null=True)
        note = serializers.CharField(required=False, allow_blank=True, max_length=NOTE_MAX_CHARS)

        class Meta:
            ref_name = "IssueStatusChange"

        def validate(self, attrs):
            unknown = set(self.initial_data) - set(self.fields)
            if unknown:
                raise ValidationError(
                    {name: ["Only status, scheduled_for and note can be changed."] for name in unknown}
                )
            return attrs

    class UpdateSerializer(serializers.ModelSerializer):
        class Meta:
            model = IssueUpdate
            ref_name = "IssueUpdate"
            fields = ["id", "author", "user", "body", "created_at"]

    class OutputSerializer(IssueOutput):
        updates = serializers.SerializerMethodField()
        jobs = serializers.SerializerMethodField()

        class Meta(IssueOutput.Meta):
            ref_name = "IssueDetail"
            fields = [*IssueOutput.Meta.fields, "updates", "jobs"]

        @extend_schema_field(JobOutput(many=True))
        def get_jobs(self, obj) -> list[dict]:
            jobs = obj.jobs.select_related("contractor").prefetch_related("appointments")
            return cast("list[dict]", JobOutput(jobs, many=True).data)

        def get_updates(self, obj) -> list[dict]:
            updates = IssueDetailApi.UpdateSerializer(obj.updates.order_by("created_at", "id"), many=True)
            return cast("list[dict]", updates.data)  # many=True: a list (the stubs type .data as one dict)

    def get_issue(self, pk: int) -> Issue:
        return self.selected_object(issue_list, pk=pk)

    @extend_schema(responses=OutputSerializer)
    def get(self, request, pk: int):
        return Response(self.OutputSerializer(self.get_issue(pk)).data)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def patch(self, request, pk: int):
        """Change the status: the tenant is told over WhatsApp and the change is recorded."""
        issue = self.get_issue(pk)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            issue_status_change(issue=issue, actor=request.user, **serializer.validated_data)
        except IssueStatusError as error:
            raise ValidationError({"status": [str(error)]}) from None
        return Response(self.OutputSerializer(self.get_issue(pk)).data)


class IssueLinkNumberApi(OrganizationScopedApi, APIView):
    """Link the number an unverified issue came from to the issue's property."""

    class InputSerializer(StrictInput):
        name = serializers.CharField(
            required=False,
            allow_blank=True,
            max_length=200,
            help_text="The tenant's name, when the number is new to you (otherwise a placeholder you can edit).",
        )

        class Meta:
            ref_name = "IssueLinkNumber"

    class OutputSerializer(serializers.Serializer):
        linked = serializers.BooleanField(help_text="False when the issue was not unverified: nothing changed.")
        phone = serializers.CharField()
        tenant = TenantBrief(allow_null=True)
        tenant_created = serializers.BooleanField()
        tenancy = serializers.IntegerField(allow_null=True, help_text="The current tenancy at the issue's property.")
        tenancy_created = serializers.BooleanField()
        verified = serializers.ListField(
            child=serializers.CharField(), help_text="References of the issues no longer unverified."
        )
        issue = IssueDetailApi.OutputSerializer()

        class Meta:
            ref_name = "IssueLinkNumberResult"

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def post(self, request, pk: int):
        """The issue came from a number with no tenancy at its property: add
        the number as a tenant there (found by phone, or new, beside any
        tenant already on the tenancy), clear the unverified mark on this and
        the number's other open issues at that property, and record it in
        each one's history. A second call changes nothing (``linked`` false)."""
        issue = self.selected_object(issue_list, pk=pk)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            result = issue_number_link(issue=issue, actor=request.user, name=serializer.validated_data.get("name", ""))
        except IssueLinkError as error:
            raise ValidationError({"issue": [str(error)]}) from None
        link = result.link
        body = {
            "linked": result.changed,
            "phone": result.phone,
            "tenant": link.tenant if link is not None else None,
            "tenant_created": bool(link and link.tenant_created),
            "tenancy": link.tenancy.pk if link is not None else None,
            "tenancy_created": bool(link and link.tenancy_created),
            "verified": result.verified,
            "issue": self.selected_object(issue_list, pk=pk),
        }
        return Response(self.OutputSerializer(body).data)


class IssueClockMetApi(OrganizationScopedApi, APIView):
    """Record that one of the issue's deadlines was met."""

    class InputSerializer(StrictInput):
        at = serializers.DateTimeField(
            required=False,
            help_text="When it was done (default: now); without an offset, in the organization's time zone.",
        )
        note = serializers.CharField(required=False, allow_blank=True, max_length=NOTE_MAX_CHARS)

        class Meta:
            ref_name = "IssueClockMet"

    @extend_schema(request=InputSerializer, responses=IssueDetailApi.OutputSerializer)
    def post(self, request, pk: int, kind: str):
        """The step ``kind`` (made_safe, investigated, summary_sent,
        works_started, resolved) was done: the clock stops, the issue's history
        says who recorded it and whether it was in time, and recording the
        investigation starts the clocks that run from it."""
        issue = self.selected_object(issue_list, pk=pk)
        if kind not in ClockKind.values:
            raise ValidationError({"kind": [f"Unknown clock {kind!r}; one of {', '.join(ClockKind.values)}."]})
        serializer = self.InputSerializer(data=request.data)
        # An `at` without an offset is the organization's local time, as the admin reads it.
        with timezone.override(zone_get(issue.organization.timezone)):
            serializer.is_valid(raise_exception=True)
        try:
            clock_meet(issue=issue, kind=kind, actor=request.user, **serializer.validated_data)
        except ClockError as error:
            raise ValidationError({"kind": [str(error)]}) from None
        return Response(IssueDetailApi.OutputSerializer(self.selected_object(issue_list, pk=pk)).data)


class IssueSummaryApi(OrganizationScopedApi, APIView):
    """The written summary a significant hazard needs (Awaab's Law): the
    draft, and sending it to the tenant."""

    class DraftOutput(serializers.Serializer):
        draft = serializers.CharField(
            help_text="Built from the issue, in English; it quotes the landlord's notes on the history: "
            "review it before sending."
        )
        max_chars = serializers.IntegerField(help_text="The longest text that can be sent.")
        owed = serializers.BooleanField(help_text="The issue's written summary deadline is running (not met).")
        due_at = serializers.DateTimeField(allow_null=True, help_text="When it runs out, while it is owed.")
        last_sent_at = serializers.DateTimeField(allow_null=True, help_text="When a summary was last sent.")
        whatsapp = serializers.CharField(allow_blank=True, help_text="The tenant's number it goes to ('' if none).")
        email = serializers.CharField(allow_blank=True, help_text="The tenant's email it also goes to ('' if none).")

        class Meta:
            ref_name = "WrittenSummaryDraft"

    class InputSerializer(StrictInput):
        text = serializers.CharField(
            trim_whitespace=True, help_text=f"The summary to send, at most {SUMMARY_MAX_CHARS} characters."
        )

        class Meta:
            ref_name = "WrittenSummarySend"

    class OutputSerializer(serializers.Serializer):
        messages = serializers.ListField(
            child=serializers.IntegerField(), help_text="The WhatsApp messages queued, in order (none when refused)."
        )
        whatsapp_not_sent = serializers.CharField(
            allow_blank=True, help_text="Why it did not go over WhatsApp ('' when it did)."
        )
        emailed_to = serializers.CharField(allow_blank=True)
        clock_met = serializers.BooleanField(help_text="The written summary's deadline was recorded as met.")
        issue = IssueDetailApi.OutputSerializer()

        class Meta:
            ref_name = "WrittenSummarySent"

    @extend_schema(responses=DraftOutput)
    def get(self, request, pk: int):
        """The draft: what was reported, what was found, what will be done by
        when (in the organization's time zone), and the next steps."""
        issue = self.selected_object(issue_list, pk=pk)
        owed = summary_owed(issue=issue)
        recipients = summary_recipients(issue=issue)
        body = {
            "draft": summary_draft(issue=issue),
            "max_chars": SUMMARY_MAX_CHARS,
            "owed": owed is not None,
            "due_at": owed.due_at if owed is not None else None,
            "last_sent_at": summary_last_sent(issue=issue),
            "whatsapp": recipients.phone,
            "email": recipients.email,
        }
        return Response(self.DraftOutput(body).data)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def post(self, request, pk: int):
        """Send ``text`` to the tenant over WhatsApp (and by email when they
        have an address), record it in the issue's history and meet the
        written summary's deadline if it is running. The same text twice is
        refused, so a retried request never sends it twice."""
        issue = self.selected_object(issue_list, pk=pk)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            sent = summary_send(issue=issue, text=serializer.validated_data["text"], user=request.user)
        except SummaryError as error:
            raise ValidationError({"text": [str(error)]}) from None
        body = {
            "messages": [message.pk for message in sent.messages],
            "whatsapp_not_sent": sent.whatsapp_refusal,
            "emailed_to": sent.emailed_to,
            "clock_met": sent.clock_met,
            "issue": self.selected_object(issue_list, pk=pk),
        }
        return Response(self.OutputSerializer(body).data)


class IssueDispatchApi(OrganizationScopedApi, APIView):
    """Who could do the job, and offering it to one of them."""

    class SuggestionOutput(serializers.Serializer):
        contractor = serializers.IntegerField(source="contractor.pk")
        name = serializers.CharField(source="contractor.name")
        score = serializers.IntegerField(help_text="Trade 3, area 2, free 1; -10 when they passed on this job.")
        reasons = serializers.ListField(child=serializers.CharField())
        open_jobs = serializers.IntegerField()

        class Meta:
            ref_name = "ContractorSuggestion"

    class InputSerializer(StrictInput):
        contractor = serializers.IntegerField()

        class Meta:
            ref_name = "JobOffer"

    @extend_schema(responses=SuggestionOutput(many=True))
    def get(self, request, pk: int):
        """The organization's active contractors, best first: trade matching the
        category, area covering the property's postcode district, who is free."""
        issue = self.selected_object(issue_list, pk=pk)
        return Response(self.SuggestionOutput(contractors_suggest(issue=issue), many=True).data)

    @extend_schema(request=InputSerializer, responses={201: JobOutput})
    def post(self, request, pk: int):
        """Offer the job: the contractor gets it over WhatsApp with Accept /
        Decline (and by email); the issue's history records it."""
        issue = self.selected_object(issue_list, pk=pk)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        contractor = self.scoped_object(Contractor.objects.all(), pk=serializer.validated_data["contractor"])
        try:
            job = job_offer(issue=issue, contractor=contractor, actor=request.user)
        except DispatchError as error:
            raise ValidationError({"contractor": [str(error)]}) from None
        return Response(JobOutput(job).data, status=201)


class IssueDispatchWithdrawApi(OrganizationScopedApi, APIView):
    """Taking back the issue's live job."""

    class InputSerializer(StrictInput):
        reason = serializers.CharField(required=False, allow_blank=True, max_length=300)

        class Meta:
            ref_name = "JobWithdraw"

    @extend_schema(request=InputSerializer, responses={200: JobOutput})
    def post(self, request, pk: int):
        """Withdraw the job offered to or accepted by a contractor: its visits
        still to come are cancelled (tenant and contractor told), the contractor
        is told (with ``reason``), and the issue can be offered again. 400 when
        the issue has no live job."""
        issue = self.selected_object(issue_list, pk=pk)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        job = job_live(issue)
        if job is None:
            raise ValidationError({"job": [f"{issue.reference} has no job offered or accepted to withdraw."]})
        try:
            job = job_withdraw(job=job, actor=request.user, reason=serializer.validated_data.get("reason", ""))
        except DispatchError as error:
            raise ValidationError({"job": [str(error)]}) from None
        return Response(JobOutput(job).data)


class IssueExportApi(OrganizationScopedApi, generics.GenericAPIView):
    """Issues as CSV, streamed: the list's filters apply."""

    filterset_class = IssueFilter
    pagination_class = None
    ordering_fields: list[str] = []  # rows go oldest first

    def get_queryset(self):
        return self.selected(issue_list)

    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR})
    def get(self, request):
        """Every issue of your organizations that the filters keep, oldest
        first, one row each with its deadlines (due and met per clock), the
        contractor who accepted it, the tenant's answer to "Is it fixed?" and
        their rating. Written as it is read, so any size streams."""
        rows = issue_rows(self.filter_queryset(self.get_queryset()))
        response = StreamingHttpResponse(csv_lines(rows), content_type="text/csv")
        response["Content-Disposition"] = 'attachment; filename="issues.csv"'
        return response
