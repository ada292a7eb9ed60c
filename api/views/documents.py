"""Knowledge documents: list, read, upload."""

from __future__ import annotations

import django_filters
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from api.filtering import OrganizationFilterSet
from api.inputs import StrictInput
from api.scoping import OrganizationScopedApi
from properties.models import Property
from retrieval.models import Document
from retrieval.selectors import document_list
from retrieval.upload import DocumentUploadError, document_upload


class DocumentOutput(serializers.ModelSerializer):
    chunk_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Document
        ref_name = "Document"
        fields = [
            "id",
            "organization",
            "property",
            "title",
            "source",
            "status",
            "error",
            "chunk_count",
            "created_at",
            "updated_at",
        ]


class DocumentUploadOutput(DocumentOutput):
    upload = serializers.ChoiceField(
        choices=["created", "replaced", "unchanged"],
        read_only=True,
        help_text="created (201); replaced: the same file name in the same scope, new title or text (200); "
        "unchanged: the same title and text (200)",
    )

    class Meta(DocumentOutput.Meta):
        ref_name = "DocumentUploaded"
        fields = [*DocumentOutput.Meta.fields, "upload"]


class DocumentFilter(OrganizationFilterSet):
    status = django_filters.MultipleChoiceFilter(choices=Document.Status.choices)
    property = django_filters.NumberFilter(field_name="property_id")
    organization_wide = django_filters.BooleanFilter(field_name="property", lookup_expr="isnull")

    class Meta:
        model = Document
        fields: list[str] = []


class DocumentListApi(OrganizationScopedApi, generics.ListAPIView):
    class InputSerializer(StrictInput):
        file = serializers.FileField(help_text="Plain text or Markdown (UTF-8), or a PDF with a text layer.")
        title = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")
        property = serializers.IntegerField(required=False, allow_null=True, default=None)
        organization = serializers.IntegerField(required=False, help_text="Needed only if you belong to several.")

        class Meta:
            ref_name = "DocumentUpload"

    OutputSerializer = DocumentOutput
    serializer_class = OutputSerializer
    filterset_class = DocumentFilter
    ordering_fields = ["title", "created_at", "updated_at"]
    ordering = ["title", "id"]
    parser_classes = [MultiPartParser, FormParser]

    def get_queryset(self):
        return self.selected(document_list)

    @extend_schema(
        request={"multipart/form-data": InputSerializer},
        responses={201: DocumentUploadOutput, 200: DocumentUploadOutput},
    )
    def post(self, request):
        """Upload a document; it is chunked and embedded in the background. The same
        file name in the same scope replaces that document (200, ``upload``
        ``replaced``, or ``unchanged`` when title and text are the same); a new one
        answers 201, ``upload`` ``created``."""
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        property = self.scoped_choice(Property.objects.all(), field="property", pk=data["property"])
        organization_id = data.get("organization")
        if organization_id is None and property is not None:
            organization_id = property.organization_id
        organization = self.organization_for_write(organization_id)
        try:
            uploaded = document_upload(
                organization=organization, property=property, title=data["title"], uploaded_file=data["file"]
            )
        except DocumentUploadError as error:
            raise ValidationError({"file": [str(error)]}) from None
        document = self.selected(document_list).get(pk=uploaded.document.pk)
        document.upload = uploaded.outcome
        created = uploaded.outcome == "created"
        return Response(
            DocumentUploadOutput(document).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )


class DocumentDetailApi(OrganizationScopedApi, APIView):
    class OutputSerializer(DocumentOutput):
        class Meta(DocumentOutput.Meta):
            ref_name = "DocumentDetail"
            fields = [*DocumentOutput.Meta.fields, "checksum", "text"]

    @extend_schema(responses=OutputSerializer)
    def get(self, request, pk: int):
        return Response(self.OutputSerializer(self.selected_object(document_list, pk=pk)).data)
