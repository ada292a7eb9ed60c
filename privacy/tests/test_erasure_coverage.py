"""Fails when a text, JSON or file field is added to any model without a
decision: erased (``ERASURE_MAP``) or not tenant content (``NOT_TENANT_CONTENT``,
with its reason)."""

from __future__ import annotations

from django.apps import apps
from django.db import models

from privacy.erasure import COVERED_APPS, ERASURE_MAP, NOT_TENANT_CONTENT

CONTENT_FIELDS = (models.CharField, models.TextField, models.JSONField, models.FileField)


def content_fields() -> set[str]:
    names = set()
    for app_label in COVERED_APPS:
        for model in apps.get_app_config(app_label).get_models():
            for field in model._meta.concrete_fields:
                if isinstance(field, CONTENT_FIELDS):
                    names.add(f"{model._meta.label}.{field.name}")
    return names


def test_every_text_json_and_file_field_is_erased_or_declared_not_tenant_content():
    undecided = sorted(content_fields() - set(ERASURE_MAP) - set(NOT_TENANT_CONTENT))
    assert not undecided, (
        "New fields that may hold a tenant's words: add each to privacy.erasure.ERASURE_MAP (and erase it in "
        f"tenant_erase) or to NOT_TENANT_CONTENT with the reason: {undecided}"
    )


def test_the_lists_name_only_fields_that_exist_and_never_both():
    existing = content_fields()
    assert not set(ERASURE_MAP) & set(NOT_TENANT_CONTENT)
    assert set(ERASURE_MAP) <= existing, sorted(set(ERASURE_MAP) - existing)
    assert set(NOT_TENANT_CONTENT) <= existing, sorted(set(NOT_TENANT_CONTENT) - existing)


def test_every_project_app_is_read():
    project = {config.label for config in apps.get_app_configs() if not config.name.startswith(("django.", "rest_"))}
    ignored = {"axes", "drf_spectacular", "drf_spectacular_sidecar", "django_filters", "authtoken"}
    assert project - ignored <= set(COVERED_APPS), sorted(project - ignored - set(COVERED_APPS))
