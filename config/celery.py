"""The Celery app. Queues are named after the work they carry so that each can
get its own workers: ``inbound`` (turn processing), ``llm`` (model calls that are
not part of a turn, such as emergency validation), ``outbound`` (sending),
``embeddings`` (document ingest) and ``default``."""

import os

from celery import Celery
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("repairs")
app.config_from_object("django.conf:settings", namespace="CELERY")
QUEUES = ("inbound", "llm", "outbound", "embeddings", "default")
app.conf.task_queues = [Queue(name) for name in QUEUES]
app.conf.task_default_queue = "default"
# Which queue each task goes to, in one table (tasks not listed go to ``default``).
app.conf.task_routes = {
    "inbound.process": {"queue": "inbound"},
    "outbound.send": {"queue": "outbound"},
    "emergency.validate": {"queue": "llm"},
    "evals.judge": {"queue": "llm"},
    "retrieval.embed_document": {"queue": "embeddings"},
}
app.autodiscover_tasks()
