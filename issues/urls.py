from django.urls import path

from issues.views import appointment_ics

urlpatterns = [path("visits/<str:token>.ics", appointment_ics, name="appointment-ics")]
