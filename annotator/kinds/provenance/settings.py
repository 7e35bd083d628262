"""The provenance kind's settings: how it ranks context sentences, and the
bounds of its online check."""

from django.core.exceptions import ImproperlyConfigured

from annotator.core.env import env_float, env_int, env_rate, env_str

# How provenance ranks context sentences: "embedding" (the packaged
# bi-encoder) or "lexical" (BM25, no model: 2.5x the items per second, the
# answer among the selected sources less often).
PROVENANCE_RELEVANCE = env_str("PROVENANCE_RELEVANCE", "embedding")
if PROVENANCE_RELEVANCE not in ("embedding", "lexical"):
    raise ImproperlyConfigured(
        f"PROVENANCE_RELEVANCE={PROVENANCE_RELEVANCE!r} is not embedding or lexical"
    )
# The online check (POST /api/provenance/check/) runs while a web worker
# waits, so what one request may ask is bounded; each limit over is a 400
# (413 for the body) naming the setting. The body, the context sentences
# ranked (and contexts), the answer's sentences (one claim each, scored
# against its sources) and the question (repeated in every claim). At these
# defaults the largest body accepted took 13-19 s on two CPU cores shared
# with other work, load 5 (bench/bench_provenance.py --worst-case).
PROVENANCE_CHECK_MAX_BYTES = env_int("PROVENANCE_CHECK_MAX_BYTES", 64 * 1024)
PROVENANCE_CHECK_MAX_SENTENCES = env_int("PROVENANCE_CHECK_MAX_SENTENCES", 64)
PROVENANCE_CHECK_MAX_CLAIMS = env_int("PROVENANCE_CHECK_MAX_CLAIMS", 10)
PROVENANCE_CHECK_MAX_QUERY_CHARS = env_int("PROVENANCE_CHECK_MAX_QUERY_CHARS", 1000)
# A check still running after this many seconds stops and answers 503, so a
# web worker is never held much longer (under gunicorn's 30 s timeout).
PROVENANCE_CHECK_SECONDS = env_float("PROVENANCE_CHECK_SECONDS", 20.0)
# Online checks per user (each may hold a web worker PROVENANCE_CHECK_SECONDS);
# past it the answer is 429.
PROVENANCE_CHECK_RATE = env_rate("PROVENANCE_CHECK_RATE", "10/min")
