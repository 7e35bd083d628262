"""Tasks are safe to run twice; failures are recorded where users look."""

import pytest

from annotator import tasks
from annotator.claims import checking
from annotator.kinds.extraction import extraction_runs
from annotator.kinds.extraction import tasks as extraction_tasks
from annotator.kinds.extraction.models import ExtractionRun
from annotator.models import (
    Claim,
    ClaimScore,
    RunStatus,
)
from tests.annotator.factories import make_claim, make_document, make_project
from tests.conftest import wait_for

pytestmark = pytest.mark.django_db


class FakeScorer:
    name = "fake-nli"
    threshold = 0.5

    def __init__(self):
        self.calls = 0

    def score_pairs(self, pairs, *, progress=False):
        self.calls += 1
        # "supports" unless the hypothesis mentions a place not in the span
        return [0.9 if h.split(": ", 1)[1] in premise else 0.1 for premise, h in pairs]


@pytest.fixture
def fake_scorer(monkeypatch):
    scorer = FakeScorer()
    monkeypatch.setattr(checking, "project_scorer", lambda project: (scorer, "v1"))
    return scorer


def test_check_task_twice_computes_once_and_never_duplicates_scores(fake_scorer):
    project = make_project()
    document = make_document(project)
    make_claim(document, external_id="ok", checked_at=None)
    make_claim(document, external_id="wrong", value="Ottawa", checked_at=None)
    make_claim(
        document, external_id="absent", context="in a galaxy far away", checked_at=None
    )

    first = tasks.check_claims(project.pk)
    assert first["checked"] == 3
    second = tasks.check_claims(project.pk)
    assert second["checked"] == 0
    assert fake_scorer.calls == 1

    verdicts = dict(Claim.objects.values_list("external_id", "verdict"))
    reasons = dict(Claim.objects.values_list("external_id", "reason"))
    assert verdicts == {"ok": "safe", "wrong": "unsafe", "absent": "unsafe"}
    assert reasons == {"ok": "", "wrong": "not_supported", "absent": "not_in_document"}
    # Only aligned claims are scored; one row per (claim, scorer, version).
    assert ClaimScore.objects.count() == 2

    forced = tasks.check_claims(project.pk, force=True)
    assert forced["checked"] == 3
    assert ClaimScore.objects.count() == 2
    ok = Claim.objects.get(external_id="ok")
    assert ok.score == pytest.approx(0.9) and ok.scored_by == "fake-nli"


def test_without_a_scorer_nothing_is_safe_and_unscored_claims_come_first(settings):
    settings.DEFAULT_SCORER = ""
    project = make_project()
    document = make_document(project)
    make_claim(document, external_id="found", checked_at=None)
    make_claim(
        document, external_id="invented", context="never said anywhere", checked_at=None
    )
    summary = checking.claims_check(project_id=project.pk)
    assert (summary.checked, summary.scorer) == (2, "")
    assert (summary.safe, summary.unsafe, summary.unscored) == (0, 1, 1)
    found = Claim.objects.get(external_id="found")
    assert found.verdict == "unscored" and found.score is None
    assert found.evidence_score == pytest.approx(1.0) and found.pipeline_version
    # The most uncertain of all: the queue hands it out first.
    assert found.uncertainty == 0.0
    invented = Claim.objects.get(external_id="invented")
    assert (invented.verdict, invented.reason) == ("unsafe", "not_in_document")


def test_sweep_sends_each_unchecked_project_as_a_new_check_goes(monkeypatch, settings):
    """One message per batch waiting, up to CHECK_PARALLEL: the rest of a
    large project's check spreads over the workers as its first send did."""
    settings.CHECK_BATCH_SIZE, settings.CHECK_PARALLEL = 2, 3
    queued = []
    monkeypatch.setattr(
        checking, "send_after_commit", lambda task, *args: queued.append((task, args))
    )
    small, large = make_project(), make_project()
    make_claim(make_document(small), checked_at=None)
    for i in range(5):
        make_claim(make_document(large, external_id=f"d{i}"), checked_at=None)
    make_project()
    assert sorted(tasks.sweep_unchecked()) == sorted([small.pk, large.pk])
    check = "annotator.tasks.check_claims"
    assert sorted(queued) == sorted([(check, (small.pk,)), *[(check, (large.pk,))] * 3])


def _entities(*items):
    return {
        "entities": [
            {"type": t, "value": v, "raw": None, "context": c} for t, v, c in items
        ]
    }


def _llm_project(fake_openai, **fields):
    return make_project(
        llm_base_url=fake_openai.base_url, llm_models=["fake-model"], **fields
    )


def test_extraction_twice_calls_the_llm_once_per_document(fake_openai, monkeypatch):
    monkeypatch.setattr(checking, "check_enqueue", lambda project_id: None)
    project = _llm_project(fake_openai)
    make_document(project, external_id="d1")
    make_document(project, external_id="d2")
    fake_openai.reply_json(_entities(("GPE", "Toronto", "took place in Toronto")))
    fake_openai.reply_json(_entities(("GPE", "Colombia", "a citizen of Colombia")))

    run = extraction_runs.extraction_run_start(project=project, model="fake-model")
    done = extraction_tasks.run_extraction(run.pk)
    assert done["status"] == RunStatus.SUCCEEDED
    again = extraction_tasks.run_extraction(run.pk)
    assert again["status"] == RunStatus.SUCCEEDED
    assert len(fake_openai.requests) == 2

    run.refresh_from_db()
    assert (run.progress_done, run.progress_total) == (2, 2)
    assert run.prompt_tokens == 20 and run.completion_tokens == 10
    claims = Claim.objects.filter(source_run_id=run.pk)
    assert sorted(claims.values_list("external_id", flat=True)) == [
        "d1:fake-model:0",
        "d2:fake-model:0",
    ]
    assert set(claims.values_list("model", flat=True)) == {"fake-model"}
    assert set(claims.values_list("source_run_type", flat=True)) == {
        "annotator.extractionrun"
    }


def test_document_the_llm_fails_on_is_recorded_and_the_run_goes_on(
    fake_openai, monkeypatch
):
    monkeypatch.setattr(checking, "check_enqueue", lambda project_id: None)
    project = _llm_project(fake_openai)
    make_document(project, external_id="d1")
    make_document(project, external_id="d2")
    fake_openai.reply_json(_entities(("GPE", "Toronto", "took place in Toronto")))
    for _ in range(8):  # the answer stays unusable through the repair attempt
        fake_openai.reply_text("{not json")

    run = extraction_runs.extraction_run_start(
        project=project,
        model="fake-model",
        params={"max_retries": 0},
    )
    extraction_tasks.run_extraction(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED
    assert run.error == "1 of 2 documents failed"
    failed = run.items.get(status=RunStatus.FAILED)
    assert failed.document.external_id == "d2" and failed.error
    assert run.cost_estimate is not None


def test_missing_api_key_fails_the_run_permanently(fake_openai, monkeypatch):
    monkeypatch.delenv("SAFEPASSAGE_TEST_KEY", raising=False)
    project = _llm_project(fake_openai, llm_api_key_env="SAFEPASSAGE_TEST_KEY")
    make_document(project)
    run = extraction_runs.extraction_run_start(project=project, model="fake-model")
    assert extraction_tasks.run_extraction(run.pk)["status"] == RunStatus.FAILED
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "SAFEPASSAGE_TEST_KEY" in run.error
    assert fake_openai.requests == []


@pytest.mark.django_db(transaction=True)
def test_extraction_started_over_api_is_run_and_checked_by_the_worker(
    personas, api, fake_openai, celery_worker
):
    project = personas.project
    project.llm_base_url = fake_openai.base_url
    project.llm_models = ["fake-model"]
    project.nli_threshold = 0.0  # the worker's untrained scorer: see conftest
    project.save()
    make_document(project, external_id="d1")
    fake_openai.responder = lambda body: _entities(
        ("GPE", "Toronto", "took place in Toronto"),
        ("GPE", "Paris", "the appeal was heard in Paris by a panel of three"),
    )
    response = api(personas.admin).post(
        "/api/extraction-runs/",
        {"project": project.pk, "model": "fake-model"},
        format="json",
    )
    assert response.status_code == 201, response.content
    run_id = response.json()["id"]
    member = api(personas.annotator)

    def finished():
        run = member.get(f"/api/extraction-runs/{run_id}/").json()
        return run if run["status"] in ("succeeded", "failed") else None

    run = wait_for(finished, worker=celery_worker)
    assert run["status"] == "succeeded", run
    assert (run["progress_done"], run["progress_total"]) == (1, 1)

    # Verdicts are for the project's admins (the project hides machine scores).
    admin = api(personas.admin)

    def verdicts():
        rows = admin.get(f"/api/claims/?project={project.pk}").json()["results"]
        return (
            {r["data"]["value"]: r["verdict"] for r in rows}
            if all(r["verdict"] for r in rows) and rows
            else None
        )

    assert wait_for(verdicts, worker=celery_worker) == {
        "Toronto": "safe",
        "Paris": "unsafe",
    }
    assert ExtractionRun.objects.get(pk=run_id).status == RunStatus.SUCCEEDED


@pytest.mark.slow
def test_check_with_the_packaged_scorer_stores_its_scores(settings):
    """The real NLI scorer (torch) loaded in-process; the untrained packaged
    base model gives arbitrary scores, so only the bookkeeping is asserted."""
    pytest.importorskip("torch")
    from pipeline.score import DEFAULT_BASE_MODEL

    settings.DEFAULT_SCORER = DEFAULT_BASE_MODEL
    project = make_project()
    document = make_document(project)
    make_claim(document, external_id="ok", checked_at=None)
    make_claim(
        document, external_id="absent", context="in a galaxy far away", checked_at=None
    )

    summary = checking.claims_check(project_id=project.pk)
    assert summary.checked == 2 and summary.scorer.startswith("nli:")
    ok = Claim.objects.get(external_id="ok")
    assert 0.0 <= ok.score <= 1.0 and ok.scored_by == summary.scorer
    [stored] = ClaimScore.objects.all()  # the unaligned one is not scored
    assert (stored.claim, stored.scorer_version) == (ok, "default")
    assert checking.claims_check(project_id=project.pk).checked == 0
