"""Evaluation results: read-only, for superusers (they span organizations)."""

from django.contrib import admin

from evals.models import EvalRun, JudgeVerdict


class ReadOnlyForSuperusers(admin.ModelAdmin):
    def has_module_permission(self, request):
        return request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser


@admin.register(EvalRun)
class EvalRunAdmin(ReadOnlyForSuperusers):
    list_display = ["started_at", "kind", "ok", "finished_at"]
    list_filter = ["kind", "ok"]
    readonly_fields = ["kind", "started_at", "finished_at", "ok", "summary", "error"]


@admin.register(JudgeVerdict)
class JudgeVerdictAdmin(ReadOnlyForSuperusers):
    list_display = ["run", "conversation", "question", "failed", "model"]
    list_filter = ["question", "failed"]
    list_select_related = ["run", "conversation"]
    readonly_fields = ["run", "conversation", "question", "failed", "reasoning", "model", "created_at"]
