from django.apps import AppConfig
from django.db.models.signals import post_delete


class RetrievalConfig(AppConfig):
    name = "retrieval"
    verbose_name = "Knowledge documents"

    def ready(self) -> None:
        from retrieval.models import Document
        from retrieval.upload import on_document_deleted

        # A deleted document's file goes too (a handbook can hold personal data).
        post_delete.connect(on_document_deleted, sender=Document, dispatch_uid="retrieval-document-file-delete")
