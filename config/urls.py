from django.contrib import admin
from django.urls import include, path

from config.health import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("webhooks/twilio/", include("conversations.urls")),
    path("api/v1/", include("api.urls")),
    path("", include("issues.urls")),
    # /api/schema/, /api/docs/, /api/redoc/: public or not by API_DOCS_PUBLIC.
    path("api/", include("api.docs_urls")),
]

handler500 = "api.errors.server_error"
