from django.urls import path

from conversations import views

urlpatterns = [
    path("whatsapp", views.twilio_whatsapp_webhook, name="twilio-whatsapp"),
    path("status", views.twilio_status_callback, name="twilio-status"),
]
