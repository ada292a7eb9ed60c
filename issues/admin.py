"""The issue list the landlord works from every day, and the issue page:
history, photos, status actions. Scoped to the user's organizations by
``properties.admin_scoping``."""

from __future__ import annotations

import datetime

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Case, Count, IntegerField, Value, When
from django.http import Http404, HttpResponseRedirect, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from issues.admin_forms import ClockMetForm, IssueStatusForm, ScheduleForm
from issues.appointments import visit_text
from issues.deadlines import ClockError, clock_meet, clock_summary, duration_text, issue_clocks_sync
from issues.dispatch import LIVE, DispatchError, contractors_suggest, job_live, job_offer, job_withdraw
from issues.export import csv_lines, issue_rows
from issues.models import ClockKind, DeadlinePolicy, DeadlineRule, Issue, IssuePhoto, IssueUpdate
from issues.selectors import DUE_SOON_HOURS, first_due, issue_list, issues_by_deadline
from issues.services import IssueLinkError, issue_number_link
from issues.status import TRANSITIONS, IssueStatusError, issue_status_change
from issues.summary import (
    SUMMARY_MAX_CHARS,
    SUMMARY_PART_MAX_CHARS,
    SummaryError,
    summary_draft,
    summary_last_sent,
    summary_owed,
    summary_recipients,
    summary_send,
)
from properties.admin_display import ADMIN_CSS, age, badge, thumbnails
from properties.admin_scoping import ScopedModelAdmin, ScopedTabularInline
from properties.working_time import zone_get

Status = Issue.Status
STATUS_VERBS: dict[str, str] = {
    Status.OPEN: "Reopen",
    Status.ACKNOWLEDGED: "Acknowledge",
    Status.SCHEDULED: "Schedule",
    Status.RESOLVED: "Resolve",
    Status.CLOSED: "Close",
}

# --- Issues ---------------------------------------------------------------------


class WrittenSummaryForm(forms.Form):
    """The written summary page: the draft, edited by the landlord."""

    text = forms.CharField(
        label="Summary for the tenant",
        widget=forms.Textarea(attrs={"rows": 28, "cols": 90}),
        help_text=f"At most {SUMMARY_MAX_CHARS} characters. It goes as it reads here.",
    )


class IssueUpdateInline(ScopedTabularInline):
    """The issue's history. Existing entries are read-only; a landlord may add
    an internal note (status changes are added by the status actions)."""

    model = IssueUpdate
    extra = 0
    fields = ["created_at", "author", "user", "body"]
    readonly_fields = ["created_at", "author", "user"]
    member_permissions = frozenset({"view", "add"})
    verbose_name = "history entry"
    verbose_name_plural = "history (status changes, tenant follow-ups, notes)"

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class IssuePhotoInline(ScopedTabularInline):
    model = IssuePhoto
    extra = 0
    fields = ["photo", "created_at"]
    readonly_fields = ["photo", "created_at"]
    member_permissions = frozenset({"view"})

    def has_add_permission(self, request, obj=None):
        return False

    @admin.display(description="Photo")
    def photo(self, obj):
        return thumbnails([obj.media], limit=1)


def attention():
    """0 for an open emergency, 1 open urgent, 2 other open, 3 done: the list's order."""
    open_statuses = list(Issue.OPEN_STATUSES)
    return Case(
        When(status__in=open_statuses, urgency=Issue.Urgency.EMERGENCY, then=Value(0)),
        When(status__in=open_statuses, urgency=Issue.Urgency.URGENT, then=Value(1)),
        When(status__in=open_statuses, then=Value(2)),
        default=Value(3),
        output_field=IntegerField(),
    )


class OpenFilter(admin.SimpleListFilter):
    title = "needs work"
    parameter_name = "open"

    def lookups(self, request, model_admin):
        return [("yes", "Open, acknowledged or scheduled"), ("no", "Resolved or closed")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(status__in=Issue.OPEN_STATUSES)
        if self.value() == "no":
            return queryset.exclude(status__in=Issue.OPEN_STATUSES)
        return queryset


class DeadlineFilter(admin.SimpleListFilter):
    title = "deadline"
    parameter_name = "deadline"

    def lookups(self, request, model_admin):
        return [("overdue", "Overdue"), ("soon", f"Due within {DUE_SOON_HOURS} h"), ("running", "Any clock running")]

    def queryset(self, request, queryset):
        which = self.value()
        return queryset if which is None else issues_by_deadline(queryset, which)


@admin.register(Issue)
class IssueAdmin(ScopedModelAdmin):
    list_display = [
        "reference",
        "urgency_badge",
        "status_badge",
        "deadline_badge",
        "title",
        "property_code",
        "tenant_who",
        "category",
        "age",
        "photos",
        "organization",
    ]
    list_display_links = ["reference", "title"]
    list_select_related = ["property", "tenant", "organization", "conversation"]
    list_filter = [
        OpenFilter,
        DeadlineFilter,
        "status",
        "urgency",
        "category",
        "tenant_unverified",
        "property",
        "organization",
    ]
    search_fields = [
        "reference",
        "title",
        "description",
        "location",
        "photo_findings",
        "tenant__name",
        "tenant__phone",
        "property__code",
        "property__address",
    ]
    date_hierarchy = "created_at"
    list_per_page = 50
    autocomplete_fields = ["property", "tenant"]
    raw_id_fields = ["conversation"]
    inlines = [IssueUpdateInline, IssuePhotoInline]
    actions = ["acknowledge", "schedule", "resolve", "link_number", "export_csv"]
    # Issues come from tenants' conversations; landlords work on them.
    member_permissions = frozenset({"view", "change"})
    readonly_fields = [
        "status",
        "scheduled_for",
        "acknowledged_at",
        "resolved_at",
        "created_at",
        "updated_at",
        "conversation_link",
        "tenant_phone",
        "emergency_alerts",
        "tenant_unverified",
        "photo_findings",
        "deadline_clocks",
        "jobs_table",
        "fix_asked_at",
        "fix_answer",
        "fix_answered_at",
        "rating",
        "rating_comment",
    ]
    fieldsets = [
        (None, {"fields": ["organization", "reference", "title", "description", "location"]}),
        ("Triage", {"fields": ["urgency", "category", "photo", "photo_findings"]}),
        (
            "Where and who",
            {
                "fields": [
                    "property",
                    "tenant",
                    "tenant_phone",
                    "tenant_unverified",
                    "conversation",
                    "conversation_link",
                ]
            },
        ),
        ("Emergency", {"fields": ["emergency_alerts"]}),
        (
            "Contractor",
            {
                "fields": ["jobs_table"],
                "description": "Offer the job to a contractor: they get it over WhatsApp with Accept / Decline.",
            },
        ),
        (
            "The tenant's verdict",
            {
                "fields": ["fix_asked_at", "fix_answer", "fix_answered_at", "rating", "rating_comment"],
                "description": "Resolving an issue asks the tenant 'Is it fixed?' over WhatsApp: No reopens it, "
                "Yes asks for a rating.",
            },
        ),
        (
            "Deadlines",
            {
                "fields": ["deadline_clocks"],
                "description": "The clocks of your active deadline policy. Record each step when it is done; "
                "resolving the issue records the work clocks (not the written summary).",
            },
        ),
        (
            "Progress",
            {
                "fields": ["status", "scheduled_for", "acknowledged_at", "resolved_at", "created_at", "updated_at"],
                "description": "Change the status with the buttons at the top or the list actions: "
                "each change is recorded and the tenant is told over WhatsApp.",
            },
        ),
    ]

    class Media:
        css = {"all": [ADMIN_CSS]}

    def get_queryset(self, request):
        return self.queryset_selected(request, issue_list).annotate(attention=attention())

    def get_ordering(self, request):
        # What needs attention first: open emergencies, then urgent, then the rest.
        return [attention().asc(), "-created_at"]

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None:
            fields += ["organization", "reference", "conversation"]
        return fields

    # --- columns ---

    @admin.display(description="Urgency", ordering="attention")
    def urgency_badge(self, obj):
        classes = [f"urgency-{obj.urgency}"]
        if obj.urgency == Issue.Urgency.EMERGENCY and obj.is_open():
            classes.append("attention")
            return badge("EMERGENCY", *classes)
        return badge(obj.get_urgency_display(), *classes)

    @admin.display(description="Status", ordering="status")
    def status_badge(self, obj):
        text = obj.get_status_display()
        if obj.status == Status.SCHEDULED and obj.scheduled_for:
            text = f"{text} {obj.scheduled_for:%d %b}"
        return badge(text, f"status-{obj.status}")

    @admin.display(description="Deadline")
    def deadline_badge(self, obj):
        """The first unmet clock: 'overdue 2 h' (red), 'due in 3 h' within a
        day (amber), else its date."""
        due = first_due(obj)
        if due is None or obj.status == Status.CLOSED:
            return "—"
        now = timezone.now()
        if due <= now:
            return badge(f"overdue {duration_text(now - due)}", "urgency-emergency", "attention")
        if due - now <= datetime.timedelta(hours=DUE_SOON_HOURS):
            return badge(f"due in {duration_text(due - now)}", "urgency-urgent")
        return f"due {due.astimezone(zone_get(obj.organization.timezone)):%d %b}"

    @admin.display(description="Clocks")
    def deadline_clocks(self, obj):
        clocks = list(obj.clocks.all())
        if not clocks:
            return "No deadline applies under your active policy."
        zone = zone_get(obj.organization.timezone)
        now = timezone.now()
        rows = []
        for clock in clocks:
            action = "—"
            if clock.met_at is None:  # the page checks the user may change the issue
                url = reverse("admin:issues_issue_clock", args=[obj.pk, clock.kind])
                action = format_html('<a class="button" href="{}">Record…</a>', url)
                if clock.kind == ClockKind.SUMMARY_SENT:
                    write = reverse("admin:issues_issue_summary", args=[obj.pk])
                    action = format_html('<a class="button" href="{}">Write and send…</a> {}', write, action)
            rows.append(
                (
                    clock.get_kind_display(),
                    f"{clock.due_at.astimezone(zone):%a %d %b %Y %H:%M}",
                    clock_summary(clock, now=now, issue_status=obj.status),
                    f"{clock.met_at.astimezone(zone):%d %b %H:%M}" if clock.met_at else "",
                    clock.rule,
                    action,
                )
            )
        body = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", rows)
        return format_html(
            '<table class="deadline-clocks"><thead><tr><th>Clock</th><th>Due</th><th>State</th><th>Done</th>'
            "<th>Rule</th><th></th></tr></thead><tbody>{}</tbody></table>",
            body,
        )

    @admin.display(description="Jobs")
    def jobs_table(self, obj):
        jobs = list(obj.jobs.select_related("contractor").prefetch_related("appointments"))
        zone = zone_get(obj.organization.timezone)
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    job.contractor.name,
                    job.get_state_display(),
                    f"{job.offered_at.astimezone(zone):%d %b %H:%M}",
                    f"{job.responded_at.astimezone(zone):%d %b %H:%M}" if job.responded_at else "",
                    "; ".join(
                        f"{visit_text(a, zone)} ({a.get_state_display().lower()})" for a in job.appointments.all()
                    ),
                )
                for job in jobs
            ),
        )
        offer = ""
        if obj.is_open() and not any(job.state in LIVE for job in jobs):
            url = reverse("admin:issues_issue_dispatch", args=[obj.pk])
            offer = format_html('<p><a class="button" href="{}">Send to a contractor…</a></p>', url)
        if not jobs:
            return offer or "—"
        return format_html(
            "<table><thead><tr><th>Contractor</th><th>State</th><th>Offered</th><th>Answered</th><th>Visits</th></tr>"
            "</thead>"
            "<tbody>{}</tbody></table>{}",
            rows,
            offer,
        )

    @admin.display(description="Property", ordering="property__code")
    def property_code(self, obj):
        return obj.property.code

    @admin.display(description="Age", ordering="created_at")
    def age(self, obj):
        return age(obj.created_at)

    @admin.display(description="Photos")
    def photos(self, obj):
        return thumbnails([photo.media for photo in obj.photos.all()])

    @admin.display(description="Tenant", ordering="tenant__name")
    def tenant_who(self, obj):
        """The tenant, or the number it came from; an unverified number is marked."""
        who = str(obj.tenant) if obj.tenant_id else (obj.conversation.phone if obj.conversation_id else "—")
        if obj.tenant_unverified:
            return format_html("{} {}", who, badge("unverified", "urgency-urgent", "unverified"))
        return who

    @admin.display(description="Tenant's phone")
    def tenant_phone(self, obj):
        phone = obj.tenant.phone if obj.tenant_id else (obj.conversation.phone if obj.conversation_id else "")
        return phone or "—"

    @admin.display(description="Alerts in this conversation")
    def emergency_alerts(self, obj):
        """Each alert with what raised it, the model's verdict and the safety
        advice the tenant was sent (read through the conversation: issues do
        not import emergencies)."""
        if obj.conversation_id is None:
            return "—"
        alerts = list(obj.conversation.emergency_alerts.order_by("created_at"))
        if not alerts:
            return "—"
        return format_html_join(
            "",
            "<p><strong>{}</strong> · {} · {}<br>{}<br><em>Safety advice sent:</em> {}</p>",
            (
                (
                    alert.get_category_display(),
                    alert.get_status_display(),
                    alert.created_at.strftime("%d %b %H:%M"),
                    alert.trigger,
                    alert.safety_reply or "—",
                )
                for alert in alerts
            ),
        )

    @admin.display(description="Conversation")
    def conversation_link(self, obj):
        if obj.conversation_id is None:
            return "—"
        url = reverse("admin:conversations_conversation_change", args=[obj.conversation_id])
        return format_html('<a href="{}">Open the WhatsApp conversation</a>', url)

    # --- inlines ---

    def inline_instance_prepare(self, request, instance, *, parent):
        if isinstance(instance, IssueUpdate) and instance.pk is None:
            instance.author = IssueUpdate.Author.LANDLORD
            instance.user = request.user

    # --- an unverified number: link it to the tenancy ---

    def _link_number(self, request, issue) -> str | None:
        """Link ``issue``'s number; returns a message for the landlord, None when refused."""
        try:
            result = issue_number_link(issue=issue, actor=request.user)
        except IssueLinkError as error:
            self.message_user(request, str(error), messages.WARNING)
            return None
        if not result.changed:
            return f"{issue.reference}: already verified, nothing to link."
        link = result.link
        assert link is not None  # changed implies a link
        self.log_change(request, issue, f"Linked {result.phone} to {link.tenant} at {issue.property.code}.")
        tenant_url = reverse("admin:properties_tenant_change", args=[link.tenant.pk])
        return format_html(
            '{} linked to <a href="{}">{}</a>{} at {}; no longer unverified: {}.',
            result.phone,
            tenant_url,
            link.tenant,
            " (new tenant: give them their name)" if link.tenant_created else "",
            issue.property.code,
            ", ".join(result.verified) or "—",
        )

    @admin.action(description="Link the number to the tenancy (unverified issues)", permissions=["change"])
    def link_number(self, request, queryset):
        unverified = list(queryset.filter(tenant_unverified=True).select_related("property"))
        if not unverified:
            self.message_user(request, "None of these issues is from an unverified number.", messages.WARNING)
            return
        done: set[int] = set()
        for issue in unverified:
            if issue.pk in done:  # verified with an earlier one from the same number
                continue
            text = self._link_number(request, issue)
            if text is not None:
                self.message_user(request, text, messages.SUCCESS)
            done.update(
                Issue.objects.filter(pk__in=[i.pk for i in unverified], tenant_unverified=False).values_list(
                    "pk", flat=True
                )
            )

    def link_number_view(self, request, object_id):
        """The button on an unverified issue's page (POST only)."""
        issue = self.get_object(request, object_id)
        if request.method != "POST" or not self.has_change_permission(request, issue):
            raise PermissionDenied
        text = self._link_number(request, issue)
        if text is not None:
            self.message_user(request, text, messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:issues_issue_change", args=[issue.pk]))

    @admin.action(description="Export as CSV (with deadlines and ratings)", permissions=["view"])
    def export_csv(self, request, queryset):
        response = StreamingHttpResponse(csv_lines(issue_rows(queryset)), content_type="text/csv")
        response["Content-Disposition"] = 'attachment; filename="issues.csv"'
        return response

    # --- status changes: list actions ---

    def _status_change_many(self, request, queryset, status, **kwargs) -> None:
        done, refused = [], []
        for issue in queryset.select_related("organization"):
            try:
                issue_status_change(issue=issue, status=status, actor=request.user, **kwargs)
                done.append(issue.reference)
            except IssueStatusError as error:
                refused.append(str(error))
        if done:
            label = dict(Status.choices)[status].lower()
            self.message_user(request, f"{label.capitalize()}, tenant notified: {', '.join(done)}.", messages.SUCCESS)
        for reason in refused:
            self.message_user(request, reason, messages.WARNING)

    @admin.action(description="Acknowledge (tell the tenant we've seen it)", permissions=["change"])
    def acknowledge(self, request, queryset):
        self._status_change_many(request, queryset, Status.ACKNOWLEDGED)

    @admin.action(description="Resolve (tell the tenant it's fixed)", permissions=["change"])
    def resolve(self, request, queryset):
        self._status_change_many(request, queryset, Status.RESOLVED)

    @admin.action(description="Schedule the repair for a date…", permissions=["change"])
    def schedule(self, request, queryset):
        """An intermediate page asks for the date; submitting it comes back here with ``apply``."""
        form = ScheduleForm(request.POST if "apply" in request.POST else None)
        if form.is_bound and form.is_valid():
            self._status_change_many(
                request,
                queryset,
                Status.SCHEDULED,
                scheduled_for=form.cleaned_data["scheduled_for"],
                note=form.cleaned_data["note"],
            )
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": "Schedule the repair",
            "opts": self.opts,
            "form": form,
            "issues": queryset.select_related("property"),
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "media": self.media,
        }
        return TemplateResponse(request, "admin/issues/issue/schedule.html", context)

    # --- status changes: one issue's page ---

    def get_urls(self):
        urls = [
            path(
                "<path:object_id>/status/",
                self.admin_site.admin_view(self.status_view),
                name="issues_issue_status",
            ),
            path(
                "<path:object_id>/clock/<str:kind>/",
                self.admin_site.admin_view(self.clock_view),
                name="issues_issue_clock",
            ),
            path(
                "<path:object_id>/dispatch/",
                self.admin_site.admin_view(self.dispatch_view),
                name="issues_issue_dispatch",
            ),
            path(
                "<path:object_id>/summary/",
                self.admin_site.admin_view(self.summary_view),
                name="issues_issue_summary",
            ),
            path(
                "<path:object_id>/link-number/",
                self.admin_site.admin_view(self.link_number_view),
                name="issues_issue_link_number",
            ),
        ]
        return urls + super().get_urls()

    def status_view(self, request, object_id):
        issue = self.get_object(request, object_id)
        if not self.has_change_permission(request, issue):
            raise PermissionDenied
        allowed = sorted(TRANSITIONS[issue.status], key=[s.value for s in Status].index)
        initial = {"status": request.GET.get("to")} if request.GET.get("to") in allowed else {}
        form = IssueStatusForm(request.POST or None, allowed=allowed, initial=initial)
        if request.method == "POST" and form.is_valid():
            try:
                issue_status_change(
                    issue=issue,
                    status=form.cleaned_data["status"],
                    actor=request.user,
                    scheduled_for=form.cleaned_data["scheduled_for"],
                    note=form.cleaned_data["note"],
                )
            except IssueStatusError as error:
                form.add_error(None, str(error))
            else:
                self.message_user(request, f"{issue.reference} is now {issue.get_status_display().lower()}.")
                return HttpResponseRedirect(reverse("admin:issues_issue_change", args=[issue.pk]))
        return self._issue_page(request, issue, "status", f"Change the status of {issue.reference}", form=form)

    def _issue_page(self, request, issue, template: str, title: str, **context):
        """One issue's own page (``admin/issues/issue/page.html`` and the pages extending it)."""
        context = {
            **self.admin_site.each_context(request),
            "title": title,
            "opts": self.opts,
            "original": issue,
            "media": self.media,
            **context,
        }
        return TemplateResponse(request, f"admin/issues/issue/{template}.html", context)

    def clock_view(self, request, object_id, kind):
        issue = self.get_object(request, object_id)
        if issue is None:
            raise Http404
        if not self.has_change_permission(request, issue) or kind not in ClockKind.values:
            raise PermissionDenied
        form = ClockMetForm(request.POST if request.method == "POST" else None)
        if request.method == "POST" and form.is_valid():
            at = form.cleaned_data["at"]
            if at is not None:
                at = at.replace(tzinfo=zone_get(issue.organization.timezone))
            try:
                clock_meet(issue=issue, kind=kind, actor=request.user, at=at, note=form.cleaned_data["note"])
            except ClockError as error:
                form.add_error(None, str(error))
            else:
                self.message_user(request, f"{ClockKind(kind).label} recorded on {issue.reference}.")
                return HttpResponseRedirect(reverse("admin:issues_issue_change", args=[issue.pk]))
        return self._issue_page(
            request,
            issue,
            "clock",
            f"{ClockKind(kind).label}: {issue.reference}",
            form=form,
            clock_label=ClockKind(kind).label,
        )

    def dispatch_view(self, request, object_id):
        issue = self.get_object(request, object_id)
        if issue is None:
            raise Http404
        if not self.has_change_permission(request, issue):
            raise PermissionDenied
        suggestions = contractors_suggest(issue=issue)
        live = job_live(issue)
        error = ""
        if request.method == "POST" and live is not None and request.POST.get("withdraw") == str(live.pk):
            try:
                job_withdraw(job=live, actor=request.user, reason=request.POST.get("reason", ""))
            except DispatchError as refused:
                error = str(refused)
            else:
                self.message_user(request, f"{issue.reference}: the job is withdrawn from {live.contractor.name}.")
                return HttpResponseRedirect(reverse("admin:issues_issue_dispatch", args=[issue.pk]))
        elif request.method == "POST":
            contractor = next(
                (s.contractor for s in suggestions if str(s.contractor.pk) == request.POST.get("contractor")), None
            )
            if contractor is None:
                error = "Choose one of the contractors listed."
            else:
                try:
                    job_offer(issue=issue, contractor=contractor, actor=request.user)
                except DispatchError as refused:
                    error = str(refused)
                else:
                    self.message_user(request, f"{issue.reference} offered to {contractor.name}.")
                    return HttpResponseRedirect(reverse("admin:issues_issue_change", args=[issue.pk]))
        return self._issue_page(
            request,
            issue,
            "dispatch",
            f"Send {issue.reference} to a contractor",
            suggestions=suggestions,
            live=live,
            error=error,
        )

    def summary_view(self, request, object_id):
        """The written summary: the draft to edit, and sending it to the tenant."""
        issue = self.get_object(request, object_id)
        if issue is None:
            raise Http404
        if not self.has_change_permission(request, issue):
            raise PermissionDenied
        if request.method == "POST":
            form = WrittenSummaryForm(request.POST)
        else:
            form = WrittenSummaryForm(initial={"text": summary_draft(issue=issue)})
        if request.method == "POST" and form.is_valid():
            try:
                sent = summary_send(issue=issue, text=form.cleaned_data["text"], user=request.user)
            except SummaryError as error:
                form.add_error(None, str(error))
            else:
                how = []
                if sent.messages:
                    how.append("over WhatsApp")
                if sent.emailed_to:
                    how.append(f"by email to {sent.emailed_to}")
                text = f"Written summary of {issue.reference} sent {' and '.join(how)}."
                if sent.whatsapp_refusal:
                    text += f" Not over WhatsApp: {sent.whatsapp_refusal}."
                if sent.clock_met:
                    text += " The written summary's deadline is recorded as met."
                self.message_user(request, text, messages.WARNING if sent.whatsapp_refusal else messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:issues_issue_change", args=[issue.pk]))
        zone = zone_get(issue.organization.timezone)
        owed = summary_owed(issue=issue)
        last_sent = summary_last_sent(issue=issue)
        return self._issue_page(
            request,
            issue,
            "summary",
            f"Written summary: {issue.reference}",
            form=form,
            recipients=summary_recipients(issue=issue),
            part_chars=SUMMARY_PART_MAX_CHARS,
            owed_due=f"{owed.due_at.astimezone(zone):%a %d %b %Y %H:%M}" if owed is not None else "",
            last_sent=f"{last_sent.astimezone(zone):%a %d %b %Y %H:%M}" if last_sent is not None else "",
        )

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if not change or {"urgency", "category"} & set(form.changed_data):
            issue_clocks_sync(issue=obj)

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        if obj is None:
            return fieldsets
        # An existing issue shows its conversation as the link only.
        return [
            (name, {**options, "fields": [f for f in options["fields"] if f != "conversation"]})
            for name, options in fieldsets
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        issue = self.get_object(request, object_id)
        extra_context = {
            **(extra_context or {}),
            "status_moves": [
                (status, STATUS_VERBS[status] if status != issue.status else "Reschedule")
                for status in sorted(TRANSITIONS[issue.status], key=[s.value for s in Status].index)
            ],
            "can_change_status": self.has_change_permission(request, issue),
            "can_link_number": issue.tenant_unverified and self.has_change_permission(request, issue),
            # From the clocks the page's queryset prefetched: no query of its own.
            "summary_owed": any(c.kind == ClockKind.SUMMARY_SENT and c.met_at is None for c in issue.clocks.all()),
        }
        return super().change_view(request, object_id, form_url, extra_context)


# --- Deadline policies ----------------------------------------------------------


class DeadlineRuleInline(ScopedTabularInline):
    model = DeadlineRule
    extra = 0
    fields = ["hazard", "clock", "amount", "unit", "starts"]
    member_permissions = frozenset({"view", "add", "change", "delete"})


@admin.register(DeadlinePolicy)
class DeadlinePolicyAdmin(ScopedModelAdmin):
    """The organization's deadlines. Editing a policy changes the clocks of
    issues reported afterwards; running clocks keep the due time they got."""

    list_display = ["name", "active", "warn_before_hours", "organization"]
    list_filter = ["active", "organization"]
    inlines = [DeadlineRuleInline]
    actions = ["make_active"]
    member_permissions = frozenset({"view", "add", "change"})

    @admin.action(description="Make the active policy", permissions=["change"])
    def make_active(self, request, queryset):
        chosen = list(queryset.annotate(rule_count=Count("rules")))
        if len({p.organization_id for p in chosen}) != len(chosen):
            self.message_user(request, "Choose one policy per organization.", messages.ERROR)
            return
        if empty := [p.name for p in chosen if not p.rule_count]:
            self.message_user(request, f"{', '.join(empty)} has no rules yet: add them first.", messages.ERROR)
            return
        for policy in chosen:
            with transaction.atomic():
                DeadlinePolicy.objects.filter(organization_id=policy.organization_id).update(active=False)
                DeadlinePolicy.objects.filter(pk=policy.pk).update(active=True)
        self.message_user(request, f"Active: {', '.join(p.name for p in chosen)}. New issues follow it.")
