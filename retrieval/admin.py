"""Knowledge documents: upload a file, read its chunks, ingest it again."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.text import Truncator

from properties.admin_display import badge
from properties.admin_scoping import ScopedModelAdmin, ScopedTabularInline
from properties.models import Organization, Property
from properties.scoping import queryset_for_user, user_organization_ids
from retrieval.models import Chunk, Document
from retrieval.selectors import document_list
from retrieval.upload import DocumentUploadError, document_reingest, document_upload


class DocumentUploadForm(forms.Form):
    organization = forms.ModelChoiceField(queryset=Organization.objects.none())
    property = forms.ModelChoiceField(
        queryset=Property.objects.none(), required=False, help_text="Empty: applies to every property."
    )
    title = forms.CharField(max_length=300, required=False, help_text="Empty: taken from the file name.")
    file = forms.FileField(help_text="PDF with a text layer, or plain text or Markdown in UTF-8.")

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        organization, property = self.fields["organization"], self.fields["property"]
        assert isinstance(organization, forms.ModelChoiceField) and isinstance(property, forms.ModelChoiceField)
        organization.queryset = queryset_for_user(Organization.objects.all(), user)
        property.queryset = queryset_for_user(Property.objects.select_related("organization"), user)
        organization_ids = user_organization_ids(user)
        if not user.is_superuser and len(organization_ids) == 1:
            organization.initial = next(iter(organization_ids))
            organization.empty_label = None

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        assert cleaned is not None  # Form.clean returns cleaned_data
        organization, property = cleaned.get("organization"), cleaned.get("property")
        if organization and property and property.organization_id != organization.pk:
            self.add_error("property", "This property belongs to another organization.")
        return cleaned


class ChunkInline(ScopedTabularInline):
    model = Chunk
    extra = 0
    readonly_fields = ("position", "heading_path", "text", "embedded")
    fields = readonly_fields
    can_delete = False
    member_permissions = frozenset({"view"})

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(boolean=True, description="Embedded")
    def embedded(self, obj):
        return obj.embedding is not None


@admin.register(Document)
class DocumentAdmin(ScopedModelAdmin):
    list_display = ["title", "property", "status_badge", "chunk_count", "source", "updated_at", "organization"]
    list_select_related = ["organization", "property"]
    list_filter = ["status", "property", "organization"]
    search_fields = ["title", "source"]
    inlines = [ChunkInline]
    actions = ["reingest"]
    ordering = ["title"]  # Meta.ordering is dropped from the GROUP BY query the count makes.
    member_permissions = frozenset({"view", "add", "delete"})
    deleted_with = frozenset({"chunk"})  # its index, which no one deletes by hand
    fields = [
        "organization",
        "property",
        "title",
        "source",
        "status",
        "error",
        "embedding_model",
        "checksum",
        "file",
        "text",
    ]

    def get_readonly_fields(self, request, obj=None):
        return self.fields

    def get_queryset(self, request):
        return self.queryset_selected(request, document_list)

    @admin.display(description="Status", ordering="status")
    def status_badge(self, obj):
        css = {"ready": "status-resolved", "pending": "status-acknowledged", "failed": "urgency-emergency"}
        return badge(obj.get_status_display(), css.get(obj.status, ""))

    @admin.display(description="Chunks", ordering="chunk_count")
    def chunk_count(self, obj):
        return obj.chunk_count

    def add_view(self, request, form_url="", extra_context=None):
        """Upload instead of a model form: the ingest service creates the Document."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = DocumentUploadForm(request.POST or None, request.FILES or None, user=request.user)
        if request.method == "POST" and form.is_valid():
            organization = form.cleaned_data["organization"]
            if not request.user.is_superuser and organization.pk not in user_organization_ids(request.user):
                raise PermissionDenied
            try:
                uploaded = document_upload(
                    organization=organization,
                    property=form.cleaned_data["property"],
                    title=form.cleaned_data["title"],
                    uploaded_file=form.cleaned_data["file"],
                )
            except DocumentUploadError as error:
                form.add_error("file", str(error))
            else:
                document = uploaded.document
                if uploaded.outcome == "created":
                    self.log_addition(request, document, [{"added": {}}])
                    self.message_user(request, f"“{document.title}” uploaded; its chunks are being embedded.")
                elif uploaded.outcome == "replaced":
                    self.log_change(request, document, f"Replaced by an upload of {document.source}")
                    self.message_user(
                        request,
                        f"“{document.title}” replaces the earlier upload of {document.source} here; "
                        "the earlier text is searched until the new one is embedded.",
                        messages.WARNING,
                    )
                else:
                    self.message_user(
                        request, f"{document.source} is the same as the one uploaded here: nothing changed."
                    )
                return HttpResponseRedirect(reverse("admin:retrieval_document_change", args=[document.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": "Upload a knowledge document",
            "opts": self.opts,
            "form": form,
            "media": self.media + form.media,
        }
        return TemplateResponse(request, "admin/retrieval/document/upload.html", context)

    @admin.action(description="Ingest again (re-chunk and re-embed)", permissions=["add"])
    def reingest(self, request, queryset):
        for document in queryset.select_related("organization", "property"):
            try:
                document_reingest(document=document)
            except DocumentUploadError as error:
                self.message_user(request, str(error), messages.ERROR)
            else:
                self.message_user(request, f"“{document.title}” queued for ingest again.")


@admin.register(Chunk)
class ChunkAdmin(ScopedModelAdmin):
    list_display = ["document", "position", "heading_path", "preview"]
    list_select_related = ["document"]
    search_fields = ["heading_path", "document__title", "text"]
    exclude = ["embedding"]
    show_full_result_count = False

    def get_queryset(self, request):
        return super().get_queryset(request).defer("document__text")  # the handbook's whole text, once per row

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="Text")
    def preview(self, obj):
        return Truncator(obj.text).chars(120)
