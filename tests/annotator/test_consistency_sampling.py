"""Sampling runs of a consistency project: answers imported without samples
get them from other models, through the API and the real openai client
against the fake server, under a budget; then the check judges the blocks."""

import json
from decimal import Decimal

import pytest

from annotator.claims import ingest
from annotator.claims.checking import claims_check
from annotator.core.errors import TransientError
from annotator.kinds.consistency import consistency_runs
from annotator.kinds.consistency import tasks as consistency_tasks
from annotator.kinds.consistency.models import ConsistencyRun
from annotator.models import (
    Claim,
    Document,
    RunStatus,
)
from tests.annotator.factories import make_project, score_by_word_overlap
from tests.conftest import wait_for
from tests.consistency_data import LAMPORT
from tests.fake_openai import Answer

pytestmark = pytest.mark.django_db

MODELS = ["sampler-a", "sampler-b"]
REPHRASED = "Who is Leslie Lamport, and what did he do?"
BRANDEIS, PAXOS = (s["text"] for s in LAMPORT["samples"])


def _consistency(fake_openai, personas, **fields):
    return make_project(
        kind="consistency",
        llm_base_url=fake_openai.base_url,
        llm_models=[*MODELS, "sampler-c"],
        members=[personas.annotator],
        **fields,
    )


def _import(project, *items):
    data = "".join(json.dumps(item) + "\n" for item in items)
    return ingest.documents_import(
        project=project, files=[("answers.jsonl", ingest.stream_of(data))]
    )


def _unsampled(item_id: str, prompt: str | None = None) -> dict:
    item = {k: v for k, v in LAMPORT.items() if k != "samples"}
    return {**item, "id": item_id, "prompt": prompt or item["prompt"]}


def _params(**changes):
    params = {
        "samplers": MODELS,
        "samples": 4,
        "variants": ["identity", "rephrase"],
        "seed": 7,
    }
    params.update(changes)
    return params


def _content(body) -> str:
    return body["messages"][0]["content"]


def _answer(body):
    """By request, not order: the calls of a run are concurrent."""
    prompt = _content(body)
    if prompt.startswith("Given a prompt, rephrase"):
        return Answer(content=f"<new>{REPHRASED}</new>")
    text = {"sampler-a": BRANDEIS, "sampler-b": PAXOS}[body["model"]]
    return Answer(content=text)


def _samples(project) -> dict[str, list]:
    return {
        d.external_id: d.metadata.get("samples", [])
        for d in Document.objects.filter(project=project)
    }


def test_an_estimate_names_calls_and_cost_and_calls_nobody(
    personas, api, fake_openai, unread_broker, settings
):
    project = _consistency(fake_openai, personas)
    _import(project, _unsampled("one"), _unsampled("two"), LAMPORT)
    body = {"project": project.pk, "params": _params()}

    response = api(personas.admin).post(
        "/api/consistency-runs/estimate/", body, format="json"
    )

    assert response.status_code == 200, response.content
    estimate = response.json()
    # LAMPORT came with samples: two answers, four samples each, and the
    # rephrased prompt written once per answer.
    assert estimate["job"] == "samples" and estimate["documents"] == 2
    kinds = estimate["calls_by_kind"]
    assert (kinds["sample_calls"], kinds["reformulation_calls"]) == (8, 2)
    assert estimate["calls"] == 10
    # The reformulator first: it is the run's model.
    assert estimate["models"] == MODELS
    assert estimate["prompt_tokens"] > 0 and estimate["completion_tokens"] > 0
    expected = (
        Decimal(estimate["prompt_tokens"]) + 2 * Decimal(estimate["completion_tokens"])
    ) / 1_000_000
    assert Decimal(estimate["cost"]) == expected.quantize(Decimal("0.000001"))
    # A model the deployment has no price for: no cost, and no budget.
    settings.LLM_PRICES = {"sampler-a": (Decimal(1), Decimal(2))}
    response = api(personas.admin).post(
        "/api/consistency-runs/estimate/", body, format="json"
    )
    assert response.json()["cost"] is None
    with_budget = {**body, "budget": "1"}
    response = api(personas.admin).post(
        "/api/consistency-runs/estimate/", with_budget, format="json"
    )
    assert response.status_code == 400
    assert "'sampler-b' has no price" in response.json()["detail"]
    settings.LLM_PRICES = {"*": (Decimal(1), Decimal(2))}
    assert fake_openai.requests == []

    # Experts follow runs; only admins estimate and start them.
    member = api(personas.annotator)
    assert (
        member.post("/api/consistency-runs/estimate/", body, format="json").status_code
        == 403
    )
    start = {**body, "budget": "1"}
    assert (
        member.post("/api/consistency-runs/", start, format="json").status_code == 403
    )
    assert ConsistencyRun.objects.count() == 0


def test_a_run_stores_samples_of_two_models_and_the_check_judges_the_blocks(
    personas,
    api,
    fake_openai,
    unread_broker,
    monkeypatch,
    django_capture_on_commit_callbacks,
):
    score_by_word_overlap(monkeypatch)
    fake_openai.responder = _answer
    project = _consistency(fake_openai, personas)
    _import(project, _unsampled("lamport"), _unsampled("again"))
    plain = Document.objects.create(project=project, external_id="plain", text="Hi.")
    claims_check(project_id=project.pk)
    assert {p.verdict for p in Claim.objects.filter(project=project)} == {"unscored"}
    admin = api(personas.admin)

    response = admin.post(
        "/api/consistency-runs/",
        {"project": project.pk, "params": _params(), "budget": "0.5"},
        format="json",
    )
    assert response.status_code == 201, response.content
    run = response.json()
    assert (run["status"], run["progress_total"], run["model"]) == (
        "pending",
        2,
        "sampler-a",
    )
    assert Decimal(run["cost_estimate"]) > 0
    assert (
        run["params"]["samplers"] == MODELS and run["created_by"] == personas.admin.pk
    )

    with django_capture_on_commit_callbacks() as sent:
        result = consistency_tasks.run_consistency(run["id"])
    assert result["status"] == RunStatus.SUCCEEDED
    assert len(sent) == 1  # the check, sent to judge the new samples

    samples = _samples(project)
    assert samples["plain"] == [] and plain.metadata == {}
    for key in ("lamport", "again"):
        assert len(samples[key]) == 4
        assert {s["model"] for s in samples[key]} == set(MODELS)
        assert {s["variant"] for s in samples[key]} == {"identity", "rephrase"}
        for s in samples[key]:
            expected = BRANDEIS if s["model"] == "sampler-a" else PAXOS
            assert s["text"] == expected
    asked = [_content(b) for b in fake_openai.bodies]
    assert asked.count(REPHRASED) == 4  # the rephrased prompt, sent as written
    assert len(fake_openai.bodies) == 10

    member = api(personas.annotator)
    progress = member.get(f"/api/consistency-runs/{run['id']}/").json()
    assert progress["status"] == "succeeded" and progress["error"] == ""
    assert (progress["progress_done"], progress["progress_total"]) == (2, 2)
    assert (progress["prompt_tokens"], progress["completion_tokens"]) == (100, 50)
    assert Decimal(progress["cost"]) == Decimal("0.0002")
    assert progress["usage"]["sampler-b"] == {
        "prompt_tokens": 40,
        "completion_tokens": 20,
        "requests": 4,
    }
    listed = member.get(f"/api/consistency-runs/?project={project.pk}").json()
    assert [r["id"] for r in listed["results"]] == [run["id"]]
    assert (
        api(personas.outsider).get(f"/api/consistency-runs/{run['id']}/").status_code
        == 404
    )

    # The blocks were reset, and the check judges them against the samples.
    summary = claims_check(project_id=project.pk)
    assert summary.checked == 6 and summary.unscored == 0
    phd = Claim.objects.get(project=project, external_id="lamport#b1")
    assert (phd.verdict, phd.reason) == ("unsafe", "contradicted")
    assert Claim.objects.get(external_id="lamport#b0").verdict == "safe"

    # Run twice: nothing is sent again; nothing is left to sample.
    assert consistency_tasks.run_consistency(run["id"])["status"] == RunStatus.SUCCEEDED
    assert len(fake_openai.bodies) == 10
    assert consistency_runs.run_estimate(project, "samples", _params()).documents == 0


def test_a_budget_hit_mid_run_stops_before_passing_it_and_keeps_what_finished(
    personas, fake_openai, unread_broker
):
    # Each call costs $0.00011 (10 prompt, 50 completion tokens) and the
    # ledger holds $0.00021 for one before sending it (max_tokens 100): one
    # call at a time, the sixth would pass $0.0007.
    fake_openai.responder = lambda body: Answer(
        content=BRANDEIS, prompt_tokens=10, completion_tokens=50
    )
    project = _consistency(fake_openai, personas)
    _import(project, *(_unsampled(f"a{i}", f"Tell me about {i}.") for i in range(6)))
    params = _params(
        samples=2, variants=["identity"], max_tokens=100, max_concurrency=1
    )
    budget = Decimal("0.0007")
    run = consistency_runs.consistency_run_start(
        project=project, budget=budget, params=params
    )

    assert consistency_tasks.run_consistency(run.pk)["status"] == RunStatus.SUCCEEDED

    run.refresh_from_db()
    assert len(fake_openai.bodies) == 5
    assert run.cost == Decimal("0.00055") and run.cost <= budget
    samples = _samples(project)
    sampled = [key for key, s in samples.items() if s]
    # Five answered calls among four answers: one or two answers whole, and
    # none half-sampled.
    assert 1 <= len(sampled) <= 2
    assert all(len(s) in (0, 2) for s in samples.values())
    assert run.progress_done == len(sampled)
    assert run.error.startswith("Stopped before the budget: budget of $0.0007")
    assert f"{6 - len(sampled)} answers left without samples" in run.error
    estimate = consistency_runs.run_estimate(project, "samples", params)
    assert estimate.documents == 6 - len(sampled)


def test_a_429_is_retried_by_the_client(personas, fake_openai, unread_broker):
    project = _consistency(fake_openai, personas)
    _import(project, _unsampled("one"))
    fake_openai.reply_status(429, message="slow down")
    fake_openai.responder = _answer
    run = consistency_runs.consistency_run_start(
        project=project,
        budget="1",
        params=_params(samples=1, variants=["identity"], samplers=["sampler-b"]),
    )
    assert consistency_tasks.run_consistency(run.pk)["status"] == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert len(fake_openai.bodies) == 2 and run.progress_done == 1
    assert (run.prompt_tokens, run.error) == (10, "")
    assert _samples(project)["one"] == [
        {"text": PAXOS, "model": "sampler-b", "variant": "identity"}
    ]


def test_a_429_past_the_client_retries_is_retried_by_the_task(
    personas, fake_openai, unread_broker
):
    project = _consistency(fake_openai, personas)
    _import(project, _unsampled("one"), _unsampled("two"))
    fake_openai.reply_status(429, message="slow down")
    fake_openai.responder = _answer
    params = _params(
        samples=1, variants=["identity"], samplers=["sampler-b"], max_retries=0
    )
    run = consistency_runs.consistency_run_start(
        project=project, budget="1", params=params
    )

    with pytest.raises(TransientError, match="HTTP 429"):
        consistency_runs.consistency_run_execute(run_id=run.pk)
    run.refresh_from_db()
    # The batch's other answer keeps its samples; the run waits for its retry.
    assert run.status == RunStatus.RUNNING and run.progress_done == 1
    assert sorted(len(s) for s in _samples(project).values()) == [0, 1]

    result = consistency_tasks.run_consistency.apply(args=[run.pk]).get()
    assert result["status"] == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert (run.progress_done, run.prompt_tokens) == (2, 20)
    assert len(fake_openai.bodies) == 3
    assert sorted(len(s) for s in _samples(project).values()) == [1, 1]


def test_a_model_the_project_does_not_allow_is_refused_by_name(
    personas, api, fake_openai
):
    project = _consistency(fake_openai, personas)
    admin = api(personas.admin)
    for url, body in (
        ("/api/consistency-runs/estimate/", {"project": project.pk}),
        ("/api/consistency-runs/", {"project": project.pk, "budget": "1"}),
    ):
        for params in (
            _params(samplers=["sampler-a", "gpt-unknown"]),
            _params(reformulator="gpt-unknown"),
        ):
            response = admin.post(url, {**body, "params": params}, format="json")
            assert response.status_code == 400
            assert (
                "model 'gpt-unknown' is not one of the project's models"
                in (response.json()["detail"])
            )
    assert ConsistencyRun.objects.count() == 0
    assert fake_openai.requests == []


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"samplers": []}, "params.samplers must be a non-empty list"),
        ({"variants": ["shout"]}, "unknown variants ['shout']"),
        ({"samples": 0}, "params.samples must be at least 1"),
        ({"max_tokens": "many"}, "params.max_tokens must be an integer"),
        ({"colour": "red"}, "unknown params ['colour']"),
        ({"temperature": "hot"}, "params.temperature must be a number"),
        ({"reformulator": 5}, "params.reformulator must be a model name"),
    ],
)
def test_bad_params_are_refused_clearly(personas, api, fake_openai, changes, message):
    project = _consistency(fake_openai, personas)
    response = api(personas.admin).post(
        "/api/consistency-runs/",
        {"project": project.pk, "budget": "1", "params": _params(**changes)},
        format="json",
    )
    assert response.status_code == 400
    assert message in response.json()["detail"]


def test_a_project_of_another_kind_is_refused(personas, api, fake_openai):
    project = personas.project
    project.llm_base_url = fake_openai.base_url
    project.llm_models = MODELS
    project.save()
    for url, body in (
        ("/api/consistency-runs/estimate/", {"project": project.pk}),
        ("/api/consistency-runs/", {"project": project.pk, "budget": "1"}),
    ):
        response = api(personas.admin).post(
            url, {**body, "params": _params()}, format="json"
        )
        assert response.status_code == 400
        assert response.json()["detail"] == (
            "project 'asylum' is of kind 'extraction'; sampling runs are for "
            "consistency projects"
        )
    assert ConsistencyRun.objects.count() == 0


def test_one_run_at_a_time_and_a_pending_one_cancels_at_once(
    personas, api, fake_openai, unread_broker
):
    project = _consistency(fake_openai, personas)
    _import(project, _unsampled("one"))
    admin = api(personas.admin)
    body = {"project": project.pk, "params": _params(), "budget": "1"}
    first = admin.post("/api/consistency-runs/", body, format="json")
    assert first.status_code == 201
    second = admin.post("/api/consistency-runs/", body, format="json")
    assert second.status_code == 400
    assert "is already pending" in second.json()["detail"]
    run_id = first.json()["id"]
    cancelled = admin.post(f"/api/consistency-runs/{run_id}/cancel/")
    assert cancelled.json()["status"] == "cancelled"
    assert consistency_tasks.run_consistency(run_id)["status"] == RunStatus.CANCELLED
    assert fake_openai.requests == []


def test_the_schema_lists_consistency_runs(personas, api):
    paths = api(personas.admin).get("/api/schema/?format=json").json()["paths"]
    assert "/api/consistency-runs/" in paths
    assert "/api/consistency-runs/estimate/" in paths


def test_the_dashboard_has_a_sampling_panel_for_consistency_projects_only(
    personas, client, fake_openai, unread_broker
):
    project = _consistency(fake_openai, personas)
    _import(project, _unsampled("one"))
    run = consistency_runs.consistency_run_start(
        project=project, budget="1", params=_params()
    )
    client.force_login(personas.admin)
    response = client.get(f"/projects/{project.pk}/dashboard/")
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="sample-form"' in html and "Sample other models" in html
    assert 'value="sampler-a, sampler-b, sampler-c"' in html
    panel = response.context["kind_panels"]
    assert panel["context"]["data"]["live_run"] == run.pk
    assert panel["context"]["data"]["urls"]["estimate"] == (
        "/api/consistency-runs/estimate/"
    )
    assert 'id="consistency-data"' in html and "js/dashboard/consistency" in html

    html = client.get(f"/projects/{personas.project.pk}/dashboard/").content.decode()
    assert 'id="sample-form"' not in html


@pytest.mark.django_db(transaction=True)
def test_sampling_started_over_the_api_is_run_by_the_worker_then_checked(
    personas, api, fake_openai, celery_worker
):
    fake_openai.responder = _answer
    project = _consistency(fake_openai, personas)
    _import(project, _unsampled("lamport"))
    response = api(personas.admin).post(
        "/api/consistency-runs/",
        {"project": project.pk, "params": _params(), "budget": "0.5"},
        format="json",
    )
    assert response.status_code == 201, response.content
    run_id = response.json()["id"]
    member = api(personas.annotator)

    def judged():
        run = member.get(f"/api/consistency-runs/{run_id}/").json()
        blocks = Claim.objects.filter(project=project)
        if run["status"] in ("pending", "running") or not blocks.exists():
            return None
        if blocks.filter(checked_at=None).exists():
            return None
        return run, list(blocks)

    run, blocks = wait_for(judged, worker=celery_worker)
    assert run["status"] == "succeeded", run
    assert (run["progress_done"], run["progress_total"]) == (1, 1)
    assert len(_samples(project)["lamport"]) == 4
    assert len(blocks) == 3
    for block in blocks:
        assert len(block.details["judgements"]) == 4  # one per sample
