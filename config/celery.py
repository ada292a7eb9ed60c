"""The Celery app. Queues are named after the work they carry so that each can
get its own workers: ``emergency`` (screening a message for an emergency and
sending the safety text: seconds matter, so it has workers that do nothing
else), ``inbound`` (turn processing), ``llm`` (model calls that are
not part of a turn, such as emergency validation), ``outbound`` (sending),
``embeddings`` (document ingest), ``transcription`` (voice notes to text: an
HTTP call of seconds that must not hold up sends or turns) and ``default``."""

import os

from celery import Celery
from kombu import Queue

from config import tasks

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("repairs")
app.config_from_object("django.conf:settings", namespace="CELERY")
QUEUES = ("emergency", "inbound", "llm", "outbound", "embeddings", "media", "transcription", "default")
app.conf.task_queues = [Queue(name) for name in QUEUES]
app.conf.task_default_queue = "default"
# Which queue each task goes to, in one table (tasks not listed go to ``default``).
app.conf.task_routes = {
    tasks.EMERGENCY_SCREEN: {"queue": "emergency"},
    tasks.INBOUND_PROCESS: {"queue": "inbound"},
    tasks.OUTBOUND_SEND: {"queue": "outbound"},
    tasks.EMERGENCY_VALIDATE: {"queue": "llm"},
    tasks.EVALS_JUDGE: {"queue": "llm"},
    tasks.RETRIEVAL_EMBED_DOCUMENT: {"queue": "embeddings"},
    tasks.MEDIA_DOWNLOAD: {"queue": "media"},
    tasks.MEDIA_TRANSCRIBE: {"queue": "transcription"},
}
app.autodiscover_tasks()
tasks.app_register(app)  # queue_task sends through this app
