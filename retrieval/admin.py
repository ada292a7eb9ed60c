from django.contrib import admin

from retrieval.models import Chunk, Document


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["title", "organization", "property", "status", "updated_at"]
    list_select_related = ["organization", "property"]
    search_fields = ["title", "source"]


@admin.register(Chunk)
class ChunkAdmin(admin.ModelAdmin):
    list_display = ["document", "position", "heading_path"]
    list_select_related = ["document"]
    exclude = ["embedding"]
    raw_id_fields = ["document"]
