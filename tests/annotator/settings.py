"""Test environment: production-like settings (DEBUG off) with a test secret.

pytest-django imports settings before any conftest runs, so the environment
the settings read has to be set here. Everything else is annotator.core.settings.
"""

import os
import socket

os.environ.setdefault(
    "SECRET_KEY", "tests-only-secret-key-not-for-deployment-0123456789"
)
# Production-like even where the shell says DEBUG=1; workers the tests start
# inherit it.
os.environ["DEBUG"] = "0"
# Test runs side by side on one Redis (and their workers, which inherit the
# environment) keep their queues and cache keys apart.
os.environ["CELERY_BROKER_KEY_PREFIX"] = f"tests-{os.getpid()}:"
os.environ["CACHE_KEY_PREFIX"] = f"tests-{os.getpid()}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The scripted LLM server (tests/fake_openai.py) listens on a port picked
# here: an allowed endpoint names its port, and the key variable the tests
# set is bound to that endpoint alone. Workers inherit the same port.
os.environ.setdefault("FAKE_OPENAI_PORT", str(_free_port()))
FAKE_OPENAI_URL = f"http://127.0.0.1:{os.environ['FAKE_OPENAI_PORT']}/v1"
os.environ.setdefault("LLM_BASE_URLS", FAKE_OPENAI_URL)
os.environ.setdefault("LLM_API_KEY_ENVS", f"SAFEPASSAGE_TEST_KEY={FAKE_OPENAI_URL}")
# Every model the tests' LLM serves costs 1 per million prompt tokens and 2
# per million completion tokens (runs take prices from the deployment alone).
os.environ.setdefault("LLM_PRICES", "*=1/2")
# Webhook receivers the tests start listen on 127.0.0.1 on ports of their own
# choosing (tests/annotator/test_webhooks.py; the worker's environment is
# this one, so any port), and retry within seconds, not minutes.
os.environ.setdefault("WEBHOOK_ALLOWED_HOSTS", "127.0.0.1:*")
os.environ.setdefault("WEBHOOK_RETRY_BACKOFF", "0.5")

# The tests' own checker kind (tests/kinds/statement), installed as a
# deployment installs its own.
os.environ.setdefault("KIND_APPS", "tests.kinds.statement")

from annotator.core.settings import *  # noqa: E402,F403

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
