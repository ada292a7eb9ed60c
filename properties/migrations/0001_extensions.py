"""PostgreSQL extensions the project needs: pgvector for embeddings and
pg_trgm for typo-tolerant matching. First migration of the bottom app, so every
other app's indexes can rely on them."""

from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations
from pgvector.django import VectorExtension


class Migration(migrations.Migration):
    initial = True
    dependencies = []
    operations = [VectorExtension(), TrigramExtension()]
