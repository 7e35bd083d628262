"""Test environment: production-like settings (DEBUG off) with a test secret.

pytest-django imports settings before any conftest runs, so the environment
the settings read has to be set here. Everything else is annotator.settings.
"""

import os

os.environ.setdefault(
    "SECRET_KEY", "tests-only-secret-key-not-for-deployment-0123456789"
)
# Production-like whatever the development settings `make setup` wrote
# (var/dev.env turns DEBUG on); workers the tests start inherit it.
os.environ["DEBUG"] = "0"
# Test runs side by side on one Redis (and their workers, which inherit the
# environment) keep their queues and cache keys apart.
os.environ["CELERY_BROKER_KEY_PREFIX"] = f"tests-{os.getpid()}:"
os.environ["CACHE_KEY_PREFIX"] = f"tests-{os.getpid()}"
# The scripted LLM server (tests/fake_openai.py) listens on a port of its own
# choosing; the key variable is one the tests set.
os.environ.setdefault("LLM_BASE_URLS", "http://127.0.0.1:*/v1")
os.environ.setdefault("LLM_API_KEY_ENVS", "SAFEPASSAGE_TEST_KEY")
# Webhook receivers the tests start listen on 127.0.0.1 (tests/annotator/
# test_webhooks.py), and retry within seconds, not minutes.
os.environ.setdefault("WEBHOOK_ALLOWED_HOSTS", "127.0.0.1")
os.environ.setdefault("WEBHOOK_RETRY_BACKOFF", "0.5")

from annotator.settings import *  # noqa: E402,F403

# Creating the personas' users with the production hasher costs ~0.3 s each.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# One test database per pytest process: two runs on the same Postgres (a
# developer's and an agent's, say) must not drop each other's database.
DATABASES["default"]["TEST"] = {"NAME": f"test_safepassage_{os.getpid()}"}  # noqa: F405

# Training tests start from the packaged base, whether or not `make setup`
# built the starter scorer, and start no first-scorer run on their own; the
# tests of both turn them on.
STARTER_SCORER = VAR_DIR / "tests-no-starter"  # noqa: F405
FIRST_SCORER_AUTO = False
