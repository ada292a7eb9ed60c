"""The product's WSGI app plus ``POST /bare``: a Django view that does nothing
but answer the same empty TwiML, so a benchmark can compare the webhook with
the framework's own floor under the same gunicorn and middleware."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from django.conf import settings
from django.core.wsgi import get_wsgi_application
from django.http import HttpResponse
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt

application = get_wsgi_application()


@csrf_exempt
def bare(request):
    return HttpResponse('<?xml version="1.0" encoding="UTF-8"?><Response/>', content_type="text/xml")


urlpatterns = [path("bare", bare), path("", include("config.urls"))]
settings.ROOT_URLCONF = __name__
