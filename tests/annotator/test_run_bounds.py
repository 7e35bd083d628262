"""Budgets and run parameters are the deployment's (issue 27, item 9): prices
come from LLM_PRICES, never from the request; retries, timeout, n, budget,
epochs, length and silver size stay within the deployment's bounds; an
extraction run has a budget and a project runs one at a time."""

import json
from decimal import Decimal

import pytest

from annotator import tasks
from annotator.kinds.extraction import extraction_runs
from annotator.kinds.extraction import tasks as extraction_tasks
from annotator.kinds.extraction.models import ExtractionRun
from annotator.models import (
    GradingRun,
    RunStatus,
    TrainingRun,
)
from tests.annotator.factories import make_claim, make_document
from tests.conftest import wait_for
from tests.fake_openai import Answer

pytestmark = pytest.mark.django_db

MODEL = "fake-model"
MICRO = Decimal("0.000001")


@pytest.fixture
def llm_project(personas, fake_openai):
    """The personas' project with an LLM and one gradable claim."""
    project = personas.project
    project.llm_base_url = fake_openai.base_url
    project.llm_models = [MODEL]
    project.gold_share = 0.0
    project.save()
    make_claim(
        make_document(project),
        value="Toronto",
        context="took place in Toronto",
        verdict="safe",
        hypothesis="GPE: Toronto",
        premise="took place in Toronto",
        evidence_score=1.0,
    )
    return project


def _entities(*values):
    return json.dumps(
        {
            "entities": [
                {"type": "GPE", "value": v, "raw": None, "context": f"in {v}"}
                for v in values
            ]
        }
    )


# --- grading -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"price_per_mtok_prompt": 0.01}, "params.price_per_mtok_prompt"),
        (
            {"price_per_mtok_prompt": 0, "price_per_mtok_completion": 0},
            "params.price_per_mtok_prompt",
        ),
        ({"price_per_mtok_completion": 0}, "params.price_per_mtok_completion"),
        (
            {"max_retries": 1_000_000},
            "params.max_retries must be at least 0 and at most 5",
        ),
        ({"max_retries": 1e6}, "params.max_retries must be an integer"),
        ({"n": 128}, "params.n must be at least 1 and at most 1"),
        ({"timeout": 86_400}, "params.timeout must be more than 0 and at most 300"),
        (
            {"max_tokens": 10**9},
            "params.max_tokens must be at least 1 and at most 8192",
        ),
    ],
)
def test_a_grading_run_with_a_price_or_a_setting_past_the_bounds_is_refused(
    personas, api, llm_project, params, named
):
    body = {"project": llm_project.pk, "model": MODEL, "budget": "1", "params": params}
    response = api(personas.admin).post("/api/grading-runs/", body, format="json")
    assert response.status_code == 400, response.content
    assert named in response.json()["detail"]
    assert not GradingRun.objects.exists()


def test_a_grading_run_within_the_bounds_is_priced_by_the_deployment(
    personas, api, llm_project, fake_openai, settings
):
    settings.LLM_PRICES = {MODEL: (Decimal(3), Decimal(5))}
    admin = api(personas.admin)
    body = {
        "project": llm_project.pk,
        "model": MODEL,
        "params": {"max_retries": 5, "n": 1, "timeout": 300, "temperature": 0},
    }
    estimate = admin.post("/api/grading-runs/estimate/", body, format="json")
    assert estimate.status_code == 200, estimate.content
    e = estimate.json()
    at_deployment_prices = (
        (3 * e["prompt_tokens"] + 5 * e["completion_tokens"]) / Decimal(1_000_000)
    ).quantize(MICRO)
    assert Decimal(e["cost"]) == at_deployment_prices

    response = admin.post("/api/grading-runs/", {**body, "budget": "1"}, format="json")
    assert response.status_code == 201, response.content
    run = response.json()
    assert Decimal(run["cost_estimate"]) == at_deployment_prices
    assert not any(key.startswith("price") for key in run["params"])

    fake_openai.reply_json({"reasoning": "r", "label": "SUPPORTS"})
    assert tasks.run_grading(run["id"])["status"] == RunStatus.SUCCEEDED
    done = GradingRun.objects.get(pk=run["id"])
    # The fake server reports 10 prompt and 5 completion tokens an answer.
    assert done.cost == Decimal("0.000055")  # (10 * 3 + 5 * 5) / 1e6


def test_a_budget_past_the_deployments_cap_is_refused(
    personas, api, llm_project, settings
):
    settings.LLM_RUN_MAX_BUDGET = 20.0
    body = {"project": llm_project.pk, "model": MODEL, "budget": "20.01"}
    for url in ("/api/grading-runs/", "/api/extraction-runs/"):
        response = api(personas.admin).post(url, body, format="json")
        assert response.status_code == 400, response.content
        assert "budget must be at most 20" in response.json()["detail"]
    assert not GradingRun.objects.exists() and not ExtractionRun.objects.exists()


def test_a_model_the_deployment_has_no_price_for_cannot_run(
    personas, api, llm_project, settings
):
    settings.LLM_PRICES = {"another-model": (Decimal(1), Decimal(1))}
    body = {"project": llm_project.pk, "model": MODEL, "budget": "1"}
    for url in ("/api/grading-runs/", "/api/extraction-runs/"):
        response = api(personas.admin).post(url, body, format="json")
        assert response.status_code == 400, response.content
        assert (
            "'fake-model' has no price in the deployment's LLM_PRICES"
            in (response.json()["detail"])
        )
    assert not GradingRun.objects.exists() and not ExtractionRun.objects.exists()


# --- extraction ----------------------------------------------------------------


def test_an_extraction_run_has_the_deployments_budget_and_runs_alone(
    personas, api, llm_project, settings
):
    settings.EXTRACTION_DEFAULT_BUDGET = 7.5
    admin = api(personas.admin)
    body = {"project": llm_project.pk, "model": MODEL}
    first = admin.post("/api/extraction-runs/", body, format="json")
    assert first.status_code == 201, first.content
    run = first.json()
    assert Decimal(run["budget"]) == Decimal("7.5")
    assert Decimal(run["cost_estimate"]) > 0 and Decimal(run["cost"]) == 0

    second = admin.post("/api/extraction-runs/", {**body, "budget": "2"}, format="json")
    assert second.status_code == 400, second.content
    assert second.json()["detail"] == (
        f"extraction run {run['id']} is already pending on project "
        f"{llm_project.name!r}; wait for it or cancel it"
    )
    assert ExtractionRun.objects.count() == 1

    ExtractionRun.objects.update(status=RunStatus.SUCCEEDED)
    third = admin.post("/api/extraction-runs/", {**body, "budget": "2"}, format="json")
    assert third.status_code == 201, third.content
    assert Decimal(third.json()["budget"]) == 2


def test_an_extraction_run_stops_before_the_next_document_would_pass_its_budget(
    llm_project, fake_openai
):
    for i in range(2):
        make_document(llm_project, external_id=f"more-{i}")
    # 1000 prompt tokens at 1 per million: 0.001 a document (with 5
    # completion tokens at 2), more than the ~0.0007 the estimate expects.
    fake_openai.responder = lambda body: Answer(
        content=_entities("Toronto"), prompt_tokens=1000
    )
    run = extraction_runs.extraction_run_start(
        project=llm_project, model=MODEL, budget="0.0015"
    )

    assert extraction_tasks.run_extraction(run.pk)["status"] == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert len(fake_openai.requests) == 1
    assert run.cost == Decimal("0.001010") and run.cost <= run.budget
    assert run.error.startswith("Stopped before the budget: the next document")
    statuses = sorted(run.items.values_list("status", flat=True))
    assert statuses == [RunStatus.CANCELLED, RunStatus.CANCELLED, RunStatus.SUCCEEDED]
    # Ended: running the task again calls nobody.
    extraction_tasks.run_extraction(run.pk)
    assert len(fake_openai.requests) == 1


@pytest.mark.django_db(transaction=True)
def test_the_worker_books_an_extraction_at_the_deployments_prices(
    personas, api, llm_project, fake_openai, celery_worker
):
    make_document(llm_project, external_id="second")
    fake_openai.responder = lambda body: Answer(
        content=_entities("Toronto"), prompt_tokens=1000
    )
    response = api(personas.admin).post(
        "/api/extraction-runs/",
        {"project": llm_project.pk, "model": MODEL, "budget": "0.0015"},
        format="json",
    )
    assert response.status_code == 201, response.content
    run_id = response.json()["id"]

    def ended():
        run = ExtractionRun.objects.get(pk=run_id)
        return run if run.status not in (RunStatus.PENDING, RunStatus.RUNNING) else None

    run = wait_for(ended, worker=celery_worker)
    # The worker's LLM_PRICES (the tests' environment): 1 and 2 per million.
    assert (run.status, run.progress_done, run.cost) == (
        RunStatus.SUCCEEDED,
        1,
        Decimal("0.001010"),
    )
    assert run.error.startswith("Stopped before the budget")
    assert len(fake_openai.requests) == 1


# --- training ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"silver_epochs": 1000}, "silver_epochs: 1000 is not in [0, 20]"),
        ({"human_epochs": 21}, "human_epochs: 21 is not in [0, 20]"),
        ({"max_length": 4096}, "max_length: 4096 is not in [8, 512]"),
        ({"silver_limit": 10_000_000}, "silver_limit: 10000000 is not in [0, 50000]"),
        ({"silver_limit": None}, "silver_limit: may not be null"),
    ],
)
def test_a_training_run_past_the_deployments_bounds_is_refused(
    personas, api, params, named
):
    admin = api(personas.admin)
    body = {"project": personas.project.pk, "params": params}
    response = admin.post("/api/training-runs/", body, format="json")
    assert response.status_code == 400, response.content
    assert named in response.json()["detail"]
    assert not TrainingRun.objects.exists()


def test_a_training_run_at_the_bounds_is_accepted(personas, api):
    params = {"silver_epochs": 20, "human_epochs": 20, "max_length": 512}
    response = api(personas.admin).post(
        "/api/training-runs/",
        {"project": personas.project.pk, "params": params},
        format="json",
    )
    assert response.status_code == 201, response.content


# --- the setting -----------------------------------------------------------------


def test_llm_prices_read_pairs_or_json_and_a_bad_one_stops_the_start(monkeypatch):
    from django.core.exceptions import ImproperlyConfigured

    from annotator.core.env import env_prices

    monkeypatch.setenv("PRICES", "gpt-4o=2.5/10, *=0/0")
    assert env_prices("PRICES") == {
        "gpt-4o": (Decimal("2.5"), Decimal(10)),
        "*": (Decimal(0), Decimal(0)),
    }
    monkeypatch.setenv("PRICES", '{"org/model=v2": [0.15, 0.6]}')
    assert env_prices("PRICES") == {"org/model=v2": (Decimal("0.15"), Decimal("0.6"))}
    for bad in (
        "gpt=-1/2",
        "gpt=1",
        "=1/2",
        "gpt=NaN/1",
        "gpt=cheap/1",
        '{"m": [1]}',
        '{"m": [true, 1]}',
        '{"m": "1/2"}',
    ):
        monkeypatch.setenv("PRICES", bad)
        with pytest.raises(ImproperlyConfigured, match="PRICES"):
            env_prices("PRICES")


def test_an_extraction_run_not_started_is_cancelled_at_once(
    personas, api, llm_project, fake_openai
):
    run = extraction_runs.extraction_run_start(project=llm_project, model=MODEL)
    expert = api(personas.annotator).post(f"/api/extraction-runs/{run.pk}/cancel/")
    assert expert.status_code == 403

    reply = api(personas.admin).post(f"/api/extraction-runs/{run.pk}/cancel/")

    assert reply.status_code == 200, reply.content
    assert reply.json()["status"] == RunStatus.CANCELLED
    assert reply.json()["error"].startswith("Cancelled before it started")
    assert set(run.items.values_list("status", flat=True)) == {RunStatus.CANCELLED}
    extraction_tasks.run_extraction(run.pk)  # its queued task calls nobody
    assert fake_openai.requests == []
    again = api(personas.admin).post(f"/api/extraction-runs/{run.pk}/cancel/")
    assert again.status_code == 400
    assert again.json()["detail"] == f"extraction run {run.pk} already cancelled"


def test_a_running_extraction_run_stops_before_its_next_document(
    personas, api, llm_project, fake_openai
):
    run = extraction_runs.extraction_run_start(project=llm_project, model=MODEL)
    ExtractionRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)

    reply = api(personas.admin).post(f"/api/extraction-runs/{run.pk}/cancel/")
    assert reply.json()["status"] == RunStatus.RUNNING  # its worker stops it

    extraction_tasks.run_extraction(run.pk)
    run.refresh_from_db()
    assert (run.status, fake_openai.requests) == (RunStatus.CANCELLED, [])
    assert run.error.startswith("Cancelled;")
    assert set(run.items.values_list("status", flat=True)) == {RunStatus.CANCELLED}
