import math
import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from retrieval.embeddings import embedding_backend


def test_minilm_is_offline_deterministic_and_normalised():
    backend = embedding_backend("minilm")
    first = backend.embed_query("how do I repressurise the boiler")
    second = backend.embed_query("how do I repressurise the boiler")
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert len(first) == 384
    assert first == second
    assert math.isclose(math.sqrt(sum(x * x for x in first)), 1.0, rel_tol=1e-4)


def test_batched_embedding_equals_one_at_a_time():
    backend = embedding_backend("minilm")
    texts = ["the stopcock is under the sink", "bins go out on Tuesday", "F22 low pressure"]
    batched = backend.embed_documents(texts)
    for text, vector in zip(texts, batched, strict=True):
        single = backend.embed_query(text)
        assert max(abs(a - b) for a, b in zip(vector, single, strict=True)) < 1e-5


def test_similar_meaning_is_closer_than_unrelated():
    backend = embedding_backend("minilm")
    query, near, far = backend.embed_documents(
        ["where do I turn the water off", "The stopcock turns off the water supply", "Bins are collected on Tuesday"]
    )

    def cosine(a, b):
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cosine(query, near) > cosine(query, far) + 0.1


def test_model_is_loaded_once_per_process():
    assert embedding_backend("minilm") is embedding_backend("minilm")


def test_counts_word_pieces_with_special_tokens():
    backend = embedding_backend("minilm")
    assert backend.count_tokens("boiler") == 3  # [CLS] boiler [SEP]
    assert backend.max_tokens == 256


def test_unknown_backend_is_a_clear_error():
    with pytest.raises(ImproperlyConfigured, match="EMBEDDING_BACKEND must be one of"):
        embedding_backend("word2vec")


EMBED_AND_COUNT_THREADS = """
import os, django
django.setup()
from retrieval.embeddings import embed_query
before = len(os.listdir("/proc/self/task"))
embed_query("the boiler shows F22")
print(before, len(os.listdir("/proc/self/task")))
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: the engine starts no extra thread either way")
@pytest.mark.parametrize("threads", ["1", "0"])
def test_the_engine_uses_the_threads_it_is_given(threads):
    """EMBEDDING_THREADS=1 keeps the E5 engine on the calling thread, so that
    processes embedding side by side do not fight over the cores; 0 lets it
    take every core."""
    env = {**os.environ, "EMBEDDING_BACKEND": "e5-multilingual", "EMBEDDING_THREADS": threads}
    env.pop("OMP_NUM_THREADS", None)
    result = subprocess.run(
        [sys.executable, "-c", EMBED_AND_COUNT_THREADS],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    before, after = map(int, result.stdout.split()[-2:])
    if threads == "1":
        assert after == before
    else:
        assert after > before
