from django.urls import path, re_path

from api.views.conversations import ConversationDetailApi, ConversationListApi, MessageListApi
from api.views.documents import DocumentDetailApi, DocumentListApi
from api.views.issues import (
    IssueClockMetApi,
    IssueDetailApi,
    IssueDispatchApi,
    IssueDispatchWithdrawApi,
    IssueExportApi,
    IssueLinkNumberApi,
    IssueListApi,
    IssueSummaryApi,
)
from api.views.not_found import UnknownEndpointApi
from api.views.privacy import (
    AuditEventListApi,
    DataRequestDecideApi,
    DataRequestListApi,
    TenantEraseApi,
    TenantExportApi,
)
from api.views.properties import (
    ContractorDetailApi,
    ContractorListApi,
    PropertyDetailApi,
    PropertyListApi,
    TenancyDetailApi,
    TenancyListApi,
    TenantDetailApi,
    TenantListApi,
)

app_name = "api"

urlpatterns = [
    path("issues/", IssueListApi.as_view(), name="issue-list"),
    path("issues/export.csv", IssueExportApi.as_view(), name="issue-export"),
    path("issues/<int:pk>/", IssueDetailApi.as_view(), name="issue-detail"),
    path("issues/<int:pk>/link-number/", IssueLinkNumberApi.as_view(), name="issue-link-number"),
    path("issues/<int:pk>/clocks/<str:kind>/met/", IssueClockMetApi.as_view(), name="issue-clock-met"),
    path("issues/<int:pk>/dispatch/", IssueDispatchApi.as_view(), name="issue-dispatch"),
    path("issues/<int:pk>/dispatch/withdraw/", IssueDispatchWithdrawApi.as_view(), name="issue-dispatch-withdraw"),
    path("issues/<int:pk>/summary/", IssueSummaryApi.as_view(), name="issue-summary"),
    path("contractors/", ContractorListApi.as_view(), name="contractor-list"),
    path("contractors/<int:pk>/", ContractorDetailApi.as_view(), name="contractor-detail"),
    path("properties/", PropertyListApi.as_view(), name="property-list"),
    path("properties/<int:pk>/", PropertyDetailApi.as_view(), name="property-detail"),
    path("tenants/", TenantListApi.as_view(), name="tenant-list"),
    path("tenants/<int:pk>/", TenantDetailApi.as_view(), name="tenant-detail"),
    path("tenants/<int:pk>/export/", TenantExportApi.as_view(), name="tenant-export"),
    path("tenants/<int:pk>/erase/", TenantEraseApi.as_view(), name="tenant-erase"),
    path("data-requests/", DataRequestListApi.as_view(), name="data-request-list"),
    path("data-requests/<int:pk>/decide/", DataRequestDecideApi.as_view(), name="data-request-decide"),
    path("audit-events/", AuditEventListApi.as_view(), name="audit-event-list"),
    path("tenancies/", TenancyListApi.as_view(), name="tenancy-list"),
    path("tenancies/<int:pk>/", TenancyDetailApi.as_view(), name="tenancy-detail"),
    path("conversations/", ConversationListApi.as_view(), name="conversation-list"),
    path("conversations/<int:pk>/", ConversationDetailApi.as_view(), name="conversation-detail"),
    path("conversations/<int:pk>/messages/", MessageListApi.as_view(), name="conversation-messages"),
    path("documents/", DocumentListApi.as_view(), name="document-list"),
    path("documents/<int:pk>/", DocumentDetailApi.as_view(), name="document-detail"),
    re_path(r"", UnknownEndpointApi.as_view(), name="unknown-endpoint"),
]
