"""The LLM grader as silver labeller: estimate, budget, cancel, and what it
must never see (gold documents, expertly labelled claims)."""

import json
import math
import threading
from decimal import Decimal

import pytest
from django.db import connection

from annotator import tasks
from annotator.labeling import gold
from annotator.models import (
    ClaimScore,
    GradingRun,
    Label,
    RunStatus,
)
from annotator.runs import grading
from pipeline.checkers.extraction.grading import GRADER_PROMPT
from pipeline.grader import GRADE_SCHEMA, LLMGrader
from pipeline.llm import LLMConfig
from tests.annotator.factories import make_claim, make_document, make_project
from tests.conftest import wait_for

pytestmark = pytest.mark.django_db

MODEL = "fake-model"
SCORER = f"llm-grader:{MODEL}"
# The test deployment prices every model at 1 (prompt) and 2 (completion) per
# million tokens (LLM_PRICES in tests/annotator/settings.py).
VERSION = LLMGrader(
    LLMConfig(base_url="http://unused/v1", model=MODEL), prompt=GRADER_PROMPT
).version


def _project(fake_openai, **fields):
    fields.setdefault("gold_share", 0.0)
    return make_project(llm_base_url=fake_openai.base_url, llm_models=[MODEL], **fields)


def _aligned(document, value="Toronto", span=None, **fields):
    """A checked claim whose context aligned."""
    span = span or f"took place in {value}"
    values = dict(
        value=value,
        context=span,
        verdict="safe",
        hypothesis=f"GPE: {value}",
        premise=span,
        evidence_score=1.0,
    )
    values.update(fields)
    return make_claim(document, **values)


def _label(claim, label):
    return Label.objects.create(claim=claim, source=Label.Source.IMPORT, label=label)


def _user_message(body) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def _supports_toronto(body):
    label = "SUPPORTS" if "Toronto" in _user_message(body) else "INSUFFICIENT"
    return {"reasoning": "The span says so, or not.", "label": label}


def _documents_on_both_sides(project):
    """A gold document and a training-side one (the split hashes the id)."""
    found = {}
    while len(found) < 2:
        document = make_document(project)
        found.setdefault(gold.is_gold_document(project, document.pk), document)
    return found[True], found[False]


def _graded_ids(fake_openai, claims) -> set[int]:
    """Which of ``claims`` the LLM was asked about (by their spans)."""
    sent = [_user_message(b) for b in fake_openai.bodies]
    return {p.pk for p in claims if any(p.premise in m for m in sent)}


def _start(project, *, budget="1", params=None):
    return grading.grading_run_start(
        project=project, model=MODEL, budget=budget, params=params
    )


def test_estimate_counts_what_a_run_would_grade_from_its_prompts(fake_openai, settings):
    project = _project(fake_openai, gold_share=0.5)
    gold_doc, doc = _documents_on_both_sides(project)
    plain = _aligned(doc, "Toronto")
    longer = _aligned(doc, "Colombia", span="is a citizen of the Republic of Colombia")
    unsure = _aligned(doc, "Ottawa")
    _label(unsure, "unsure")  # a pass, not a label: still graded
    for label in ("safe", "unsafe"):
        _label(_aligned(doc, "Paris"), label)
    _aligned(doc, "Lima", verdict="unsafe", reason="not_in_document")
    make_claim(doc, value="Quito")  # not checked yet
    _aligned(gold_doc, "Berlin")
    graded = _aligned(doc, "Madrid")
    ClaimScore.objects.create(
        claim=graded, scorer=SCORER, scorer_version=VERSION, score=1.0
    )
    old_prompt = _aligned(doc, "Rome")
    ClaimScore.objects.create(
        claim=old_prompt, scorer=SCORER, scorer_version="old", score=1.0
    )

    estimate = grading.grading_estimate(project, MODEL)

    counted = [plain, longer, unsure, old_prompt]
    schema = json.dumps(GRADE_SCHEMA, ensure_ascii=False)
    chars = sum(
        len(GRADER_PROMPT.system)
        + len(GRADER_PROMPT.message(p.premise, p.hypothesis))
        + len(schema)
        for p in counted
    )
    prompt_tokens = math.ceil(chars / 4) + 9 * len(counted)
    assert estimate.claims == 4
    assert (estimate.scorer, estimate.scorer_version) == (SCORER, VERSION)
    assert estimate.prompt_tokens == prompt_tokens
    assert estimate.completion_tokens == 400
    expected = (Decimal(prompt_tokens) + 2 * Decimal(400)) / 1_000_000
    assert estimate.cost == expected.quantize(Decimal("0.000001"))
    settings.LLM_PRICES = {"other-model": (Decimal(1), Decimal(2))}
    assert grading.grading_estimate(project, MODEL).cost is None  # no price
    assert fake_openai.requests == []  # an estimate calls nobody


def test_run_grades_stores_scores_and_running_again_sends_nothing(fake_openai):
    fake_openai.responder = _supports_toronto
    project = _project(fake_openai)
    doc = make_document(project)
    toronto = _aligned(doc, "Toronto")
    toronto2 = _aligned(doc, "Toronto", span="before member Smith in Toronto")
    ottawa = _aligned(doc, "Ottawa")

    run = _start(project)
    assert (run.status, run.progress_total) == (RunStatus.PENDING, 3)
    assert run.cost_estimate > 0
    assert tasks.run_grading(run.pk)["status"] == RunStatus.SUCCEEDED
    assert tasks.run_grading(run.pk)["status"] == RunStatus.SUCCEEDED
    assert len(fake_openai.bodies) == 3

    run.refresh_from_db()
    assert (run.progress_done, run.progress_total) == (3, 3)
    # The fake server reports 10 prompt and 5 completion tokens per answer.
    assert (run.prompt_tokens, run.completion_tokens) == (30, 15)
    assert run.cost == Decimal("0.000060")  # (30 * 1 + 15 * 2) / 1e6
    assert run.error == "" and run.started_at and run.finished_at
    scores = {
        s.claim_id: (s.scorer, s.scorer_version, s.score)
        for s in ClaimScore.objects.all()
    }
    assert scores == {
        toronto.pk: (SCORER, VERSION, 1.0),
        toronto2.pk: (SCORER, VERSION, 1.0),
        ottawa.pk: (SCORER, VERSION, 0.0),
    }
    # The grader's reasoning is kept, for the expert to weigh.
    assert set(ClaimScore.objects.values_list("reasoning", flat=True)) == {
        "The span says so, or not."
    }

    again = _start(project)
    assert again.progress_total == 0
    tasks.run_grading(again.pk)
    assert len(fake_openai.bodies) == 3
    assert ClaimScore.objects.count() == 3
    assert grading.grader_silver_labels(project) == {
        toronto.pk: "safe",
        toronto2.pk: "safe",
        ottawa.pk: "unsafe",
    }


def test_silver_labels_leave_out_expert_labels_and_gold_documents(fake_openai):
    project = _project(fake_openai, gold_share=0.5)
    gold_doc, doc = _documents_on_both_sides(project)
    kept = _aligned(doc, "Toronto")
    labelled = _aligned(doc, "Ottawa")
    in_gold = _aligned(gold_doc, "Berlin")
    twice = _aligned(doc, "Lima")
    for p, score in ((kept, 1.0), (labelled, 1.0), (in_gold, 0.0), (twice, 1.0)):
        ClaimScore.objects.create(
            claim=p, scorer=SCORER, scorer_version=VERSION, score=score
        )
    # A later grade (another model) wins over the earlier one.
    ClaimScore.objects.create(
        claim=twice, scorer="llm-grader:other", scorer_version="v", score=0.0
    )
    ClaimScore.objects.create(
        claim=kept, scorer="nli:some-model", scorer_version="v", score=0.0
    )
    _label(labelled, "unsafe")

    assert grading.grader_silver_labels(project) == {
        kept.pk: "safe",
        twice.pk: "unsafe",
    }
    project.gold_share = 1.0  # every document moves into the gold set
    project.save()
    assert grading.grader_silver_labels(project) == {}


def test_gold_and_expertly_labelled_claims_are_never_graded(fake_openai):
    fake_openai.responder = _supports_toronto
    project = _project(fake_openai, gold_share=0.5)
    gold_doc, doc = _documents_on_both_sides(project)
    in_gold = _aligned(gold_doc, "Berlin")
    safe = _aligned(doc, "Paris")
    unsafe = _aligned(doc, "Lima")
    _label(safe, "safe")
    _label(unsafe, "unsafe")
    unsure = _aligned(doc, "Ottawa")
    _label(unsure, "unsure")
    plain = _aligned(doc, "Toronto")

    run = _start(project)
    tasks.run_grading(run.pk)

    everyone = [in_gold, safe, unsafe, unsure, plain]
    assert _graded_ids(fake_openai, everyone) == {unsure.pk, plain.pk}
    assert set(ClaimScore.objects.values_list("claim_id", flat=True)) == {
        unsure.pk,
        plain.pk,
    }


def test_budget_stops_the_run_before_the_next_batch_would_pass_it(fake_openai):
    project = _project(fake_openai)
    doc = make_document(project)
    for i in range(20):
        _aligned(doc, "Toronto", span=f"hearing {i:02d} took place in Toronto")
    # 1000 prompt tokens an answer at $1 per million: $0.001 per claim,
    # more than the ~$0.0007 (~500 prompt and 100 completion tokens) that the
    # estimate expects from the prompt's length.
    for _ in range(20):
        fake_openai.reply_json(
            {"reasoning": "r", "label": "SUPPORTS"},
            prompt_tokens=1000,
            completion_tokens=0,
        )
    budget = Decimal("0.015")
    assert grading.BATCH_SIZE == 8

    run = _start(project, budget=budget)
    assert run.cost_estimate < Decimal("0.02")  # the estimate undershoots
    tasks.run_grading(run.pk)

    run.refresh_from_db()
    # First batch: 0.008 spent. By the estimate the second would fit (about
    # 0.0136), but at the price the run has seen it would not (0.016 > 0.015).
    assert run.status == RunStatus.SUCCEEDED
    assert run.progress_done == 8 and len(fake_openai.bodies) == 8
    assert run.cost == Decimal("0.008") and run.cost <= budget
    assert run.error.startswith("Stopped before the budget")
    assert "12 claims left ungraded" in run.error
    assert ClaimScore.objects.count() == 8
    assert grading.grading_estimate(project, MODEL).claims == 12


def test_budget_below_one_batch_grades_nothing(fake_openai):
    fake_openai.responder = _supports_toronto
    project = _project(fake_openai)
    _aligned(make_document(project))
    run = _start(project, budget="0.000001")
    tasks.run_grading(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED and run.progress_done == 0
    assert run.cost == 0 and fake_openai.requests == []
    assert "1 claims left ungraded" in run.error


def test_a_429_is_retried_by_the_client(fake_openai):
    project = _project(fake_openai)
    _aligned(make_document(project))
    fake_openai.reply_status(429, message="slow down")
    fake_openai.reply_json({"reasoning": "r", "label": "SUPPORTS"})
    run = _start(project)
    assert tasks.run_grading(run.pk)["status"] == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert len(fake_openai.bodies) == 2 and run.progress_done == 1
    assert (run.prompt_tokens, run.error) == (10, "")
    assert ClaimScore.objects.get().score == 1.0


def test_a_429_past_the_client_retries_is_retried_by_the_task(fake_openai):
    fake_openai.responder = _supports_toronto
    project = _project(fake_openai)
    doc = make_document(project)
    _aligned(doc, "Toronto")
    _aligned(doc, "Toronto", span="later, in Toronto again")
    fake_openai.reply_status(429, message="slow down")
    run = _start(project, params={"max_retries": 0})

    with pytest.raises(grading.TransientError, match="HTTP 429"):
        grading.grading_run_execute(run_id=run.pk)
    run.refresh_from_db()
    # The batch's other grade is kept; the run waits for its retry.
    assert run.status == RunStatus.RUNNING and run.progress_done == 1
    assert ClaimScore.objects.count() == 1

    # Applied eagerly, the task's autoretry runs again at once: the first
    # attempt meets another 429, the retry grades the last claim.
    fake_openai.reply_status(429, message="slow down")
    result = tasks.run_grading.apply(args=[run.pk]).get()
    assert result["status"] == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert (run.progress_done, run.prompt_tokens) == (2, 20)
    assert len(fake_openai.bodies) == 4
    assert ClaimScore.objects.count() == 2


def test_the_task_gives_up_after_its_retries_and_says_so(fake_openai):
    project = _project(fake_openai)
    _aligned(make_document(project))
    for _ in range(tasks.run_grading.max_retries + 1):
        fake_openai.reply_status(503, message="overloaded")
    run = _start(project, params={"max_retries": 0})
    result = tasks.run_grading.apply(args=[run.pk]).get()
    assert result["status"] == RunStatus.FAILED
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert run.error.startswith(
        f"gave up after {tasks.run_grading.max_retries} retries"
    )
    assert "HTTP 503" in run.error and fake_openai.pending == 0


def test_an_unusable_answer_is_recorded_and_the_run_goes_on(fake_openai):
    def answer(body):
        contents = " ".join(str(m["content"]) for m in body["messages"])
        if "Ottawa" in contents:  # the first answer and the repair alike
            return {"verdict": "maybe"}
        return _supports_toronto(body)

    fake_openai.responder = answer
    project = _project(fake_openai)
    doc = make_document(project)
    toronto = _aligned(doc, "Toronto")
    ottawa = _aligned(doc, "Ottawa", external_id="the-ottawa-one")

    run = _start(project)
    assert tasks.run_grading(run.pk)["status"] == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert run.progress_done == 2
    assert len(fake_openai.bodies) == 3  # one repair attempt
    assert run.prompt_tokens == 30  # the failed attempts are paid for too
    assert ClaimScore.objects.get().claim == toronto
    assert run.error.startswith("1 claims left ungraded")
    assert f"claim {ottawa.pk} (the-ottawa-one):" in run.error
    assert "still unusable" in run.error
    # It stays ungraded: a later run tries it again.
    assert grading.grading_estimate(project, MODEL).claims == 1


def test_a_rejected_key_fails_the_run(fake_openai):
    project = _project(fake_openai)
    _aligned(make_document(project))
    fake_openai.reply_status(401, message="bad key")
    run = _start(project)
    assert tasks.run_grading(run.pk)["status"] == RunStatus.FAILED
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and run.finished_at
    assert "HTTP 401" in run.error and "bad key" in run.error
    assert len(fake_openai.bodies) == 1 and ClaimScore.objects.count() == 0


def test_missing_api_key_fails_the_run_before_any_call(fake_openai, monkeypatch):
    monkeypatch.delenv("SAFEPASSAGE_TEST_KEY", raising=False)
    project = _project(fake_openai, llm_api_key_env="SAFEPASSAGE_TEST_KEY")
    _aligned(make_document(project))
    run = _start(project)
    assert tasks.run_grading(run.pk)["status"] == RunStatus.FAILED
    run.refresh_from_db()
    assert "SAFEPASSAGE_TEST_KEY" in run.error
    assert fake_openai.requests == []


@pytest.mark.django_db(transaction=True)
def test_cancel_stops_a_running_run_before_its_next_batch(fake_openai, monkeypatch):
    monkeypatch.setattr(tasks.run_grading, "delay", lambda run_id: None)
    project = _project(fake_openai)
    doc = make_document(project)
    for i in range(20):
        _aligned(doc, "Toronto", span=f"hearing {i:02d} took place in Toronto")
    run = _start(project)
    seen = []
    lock = threading.Lock()

    def answer(body):
        # An admin cancels while the first batch is being graded, from
        # another connection (the server's request thread).
        with lock:
            if not seen:
                try:
                    after = grading.grading_run_cancel(
                        run=GradingRun.objects.get(pk=run.pk)
                    )
                    seen.append((after.status, after.cancel_requested))
                finally:
                    connection.close()
        return {"reasoning": "r", "label": "SUPPORTS"}

    fake_openai.responder = answer
    assert tasks.run_grading(run.pk)["status"] == RunStatus.CANCELLED
    # The worker held the run: the cancel asked it to stop, and it did.
    assert seen == [(RunStatus.RUNNING, True)]
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED and run.finished_at
    assert run.progress_done == 8 and len(fake_openai.bodies) == 8
    assert ClaimScore.objects.count() == 8


def test_cancelling_a_pending_run_stops_it_at_once(personas, api, fake_openai):
    project = personas.project
    project.llm_base_url = fake_openai.base_url
    project.save()
    _aligned(make_document(project))
    run = _start(project)
    response = api(personas.admin).post(f"/api/grading-runs/{run.pk}/cancel/")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "cancelled"
    assert tasks.run_grading(run.pk)["status"] == RunStatus.CANCELLED
    assert fake_openai.requests == []
    again = api(personas.admin).post(f"/api/grading-runs/{run.pk}/cancel/")
    assert again.status_code == 400
    assert "already cancelled" in again.json()["detail"]


# --- API -----------------------------------------------------------------------


@pytest.fixture
def llm_project(personas, fake_openai):
    project = personas.project
    project.llm_base_url = fake_openai.base_url
    project.llm_models = [MODEL]
    project.gold_share = 0.0
    project.save()
    _aligned(make_document(project))
    return project


def _start_body(project, **changes):
    body = {"project": project.pk, "model": MODEL, "budget": "0.5", "params": {}}
    body.update(changes)
    return body


def test_only_admins_estimate_start_and_cancel(personas, api, llm_project):
    member = api(personas.annotator)
    estimate = {"project": llm_project.pk, "model": MODEL}
    response = member.post("/api/grading-runs/estimate/", estimate, format="json")
    assert response.status_code == 403
    started = member.post("/api/grading-runs/", _start_body(llm_project), format="json")
    assert started.status_code == 403
    assert GradingRun.objects.count() == 0
    assert api().get("/api/grading-runs/").status_code == 401

    run = _start(llm_project)
    assert member.post(f"/api/grading-runs/{run.pk}/cancel/").status_code == 403
    # Members follow their project's runs; outsiders do not see them.
    listed = member.get(f"/api/grading-runs/?project={llm_project.pk}").json()
    assert [r["id"] for r in listed["results"]] == [run.pk]
    assert member.get(f"/api/grading-runs/{run.pk}/").status_code == 200
    outsider = api(personas.outsider)
    assert outsider.get(f"/api/grading-runs/{run.pk}/").status_code == 404
    assert outsider.get("/api/grading-runs/").json()["results"] == []


def test_admin_gets_an_estimate_then_starts_a_run(personas, api, llm_project):
    admin = api(personas.admin)
    response = admin.post(
        "/api/grading-runs/estimate/",
        {"project": llm_project.pk, "model": MODEL},
        format="json",
    )
    assert response.status_code == 200, response.content
    estimate = response.json()
    assert estimate["claims"] == 1 and estimate["scorer"] == SCORER
    assert estimate["prompt_tokens"] > 0 and estimate["completion_tokens"] == 100
    assert Decimal(estimate["cost"]) > 0

    response = admin.post("/api/grading-runs/", _start_body(llm_project), format="json")
    assert response.status_code == 201, response.content
    run = response.json()
    assert run["status"] == "pending" and run["scorer"] == SCORER
    assert Decimal(run["budget"]) == Decimal("0.5")
    assert run["cost_estimate"] == estimate["cost"]
    assert (run["progress_done"], run["progress_total"]) == (0, 1)
    assert run["created_by"] == personas.admin.pk


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"budget": "0"}, "budget must be more than 0"),
        ({"budget": "-1"}, "budget must be more than 0"),
        ({"params": {"price_per_mtok_prompt": 0}}, "prices are set by the deployment"),
        ({"params": {"max_retries": -1}}, "params.max_retries must be at least 0"),
        ({"model": "gpt-unknown"}, "is not one of the project's models"),
    ],
)
def test_start_refuses_bad_input_clearly(personas, api, llm_project, changes, message):
    response = api(personas.admin).post(
        "/api/grading-runs/", _start_body(llm_project, **changes), format="json"
    )
    assert response.status_code == 400
    assert message in response.json()["detail"]
    assert GradingRun.objects.count() == 0


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        ("abc", "budget must be a number"),
        ("NaN", "budget must be more than 0"),
        ("0.0000001", "budget must be more than 0"),  # 0 at the stored precision
        ("1000000", "budget must be at most 100"),
    ],
)
def test_start_refuses_budgets_it_cannot_keep(fake_openai, budget, message):
    project = _project(fake_openai)
    with pytest.raises(grading.ApplicationError, match=message):
        _start(project, budget=budget)
    assert GradingRun.objects.count() == 0


def test_start_refuses_without_an_llm_or_with_a_run_going(personas, api, llm_project):
    admin = api(personas.admin)
    first = admin.post("/api/grading-runs/", _start_body(llm_project), format="json")
    assert first.status_code == 201
    second = admin.post("/api/grading-runs/", _start_body(llm_project), format="json")
    assert second.status_code == 400
    assert "is already pending" in second.json()["detail"]

    llm_project.llm_base_url = ""
    llm_project.save()
    GradingRun.objects.update(status=RunStatus.SUCCEEDED)
    for url, body in (
        ("/api/grading-runs/", _start_body(llm_project)),
        ("/api/grading-runs/estimate/", {"project": llm_project.pk, "model": MODEL}),
    ):
        response = admin.post(url, body, format="json")
        assert response.status_code == 400
        assert "has no LLM configured" in response.json()["detail"]
    assert GradingRun.objects.count() == 1


def test_a_kind_without_a_grading_prompt_is_neither_offered_nor_graded(
    personas, api, client, fake_openai
):
    project = _project(fake_openai, kind="consistency")
    project.memberships.create(user=personas.admin, role="admin")
    response = api(personas.admin).post(
        "/api/grading-runs/estimate/",
        {"project": project.pk, "model": MODEL},
        format="json",
    )
    assert response.status_code == 400
    assert "not graded by an LLM" in response.json()["detail"]
    client.force_login(personas.admin)
    page = client.get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert 'id="grading"' not in page
    other = _project(fake_openai, kind="provenance", name="rag")
    other.memberships.create(user=personas.admin, role="admin")
    page = client.get(f"/projects/{other.pk}/dashboard/").content.decode()
    assert 'id="grading"' in page
    assert GradingRun.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_grading_started_over_api_is_run_by_the_worker(
    personas, api, fake_openai, celery_worker
):
    fake_openai.responder = _supports_toronto
    project = personas.project
    project.llm_base_url = fake_openai.base_url
    project.gold_share = 0.0
    project.save()
    doc = make_document(project)
    toronto = _aligned(doc, "Toronto")
    ottawa = _aligned(doc, "Ottawa")
    response = api(personas.admin).post(
        "/api/grading-runs/", _start_body(project), format="json"
    )
    assert response.status_code == 201, response.content
    run_id = response.json()["id"]
    member = api(personas.annotator)

    def finished():
        run = member.get(f"/api/grading-runs/{run_id}/").json()
        return run if run["status"] not in ("pending", "running") else None

    run = wait_for(finished, worker=celery_worker)
    assert run["status"] == "succeeded", run
    assert (run["progress_done"], run["progress_total"]) == (2, 2)
    assert (run["prompt_tokens"], run["completion_tokens"]) == (20, 10)
    assert Decimal(run["cost"]) == Decimal("0.00004")
    assert grading.grader_silver_labels(project) == {
        toronto.pk: "safe",
        ottawa.pk: "unsafe",
    }


def test_a_training_run_learns_from_the_graders_verdicts_as_silver(
    fake_openai, settings, tmp_path, monkeypatch
):
    """The verdicts a grading run stored become silver pairs of the next
    training run (expert labels and the synthetic pairs beside them)."""
    from annotator.training import execute
    from annotator.training import runs as training_runs
    from pipeline.errors import TrainingError

    settings.VAR_DIR = tmp_path
    project = _project(fake_openai)
    document = make_document(project)
    _label(_aligned(document, "Toronto"), "safe")
    graded = {
        _aligned(document, "Toronto").pk: 1.0,
        _aligned(document, "Ottawa").pk: 0.0,
    }
    for pk, score in graded.items():
        ClaimScore.objects.create(
            claim_id=pk, scorer=SCORER, scorer_version=VERSION, score=score
        )
    seen = {}

    def spy(checker, claims, labels, out_dir, *, silver, **kwargs):
        seen["silver"] = silver
        raise TrainingError("enough: the pairs are what this test looks at")

    monkeypatch.setattr(execute, "train_scorer", spy)
    run = training_runs.training_run_start(project=project, enqueue=False)
    tasks.train_scorer(run.pk)

    from_grader = {
        (e.hypothesis, e.supported) for e in seen["silver"] if e.source == "silver:llm"
    }
    assert from_grader == {("GPE: Toronto", True), ("GPE: Ottawa", False)}
    assert any(e.source != "silver:llm" for e in seen["silver"])  # synthetic ones
