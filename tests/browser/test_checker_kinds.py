"""A kind that exists only in the tests (tests/kinds/statement: its checker,
and its app with its own LLM job, setting, endpoint, hook and claim partial,
nothing of it in the app's code) goes through the whole app: its project made
over the API, its claims written by its LLM job through its endpoint and a
real worker, checked, shown by its own partial and labelled by keyboard."""

import pytest

from annotator.models import Claim
from tests.annotator.factories import jsonl, upload
from tests.browser.conftest import (
    label_by_key,
    log_in,
    project_over_api,
    stored_labels,
    wait_all_sent,
)
from tests.conftest import wait_for
from tests.kinds.statement.checker import KIND
from tests.kinds.statement.models import StatementRun

pytestmark = pytest.mark.django_db(transaction=True)

MEMO = "The board met in March. The budget was approved by the board."
STATEMENTS = [
    "the board approved the budget",
    "the board rejected the budget",
    "the board met in May",
]


def test_a_test_only_kind_is_labelled_end_to_end(
    personas, api, new_page, artifacts, fake_openai, celery_worker
):
    admin = api(personas.admin)
    expert = personas.annotator
    project = project_over_api(admin, name="memos", kind=KIND, expert=expert)
    response = admin.patch(
        f"/api/projects/{project.pk}/",
        {"llm_base_url": fake_openai.base_url, "llm_models": [fake_openai.model]},
        format="json",
    )
    assert response.status_code == 200, response.content
    documents = jsonl({"id": "memo", "text": MEMO})
    response = upload(
        admin, "/api/documents/upload/", project, "memo.jsonl", documents, "files"
    )
    assert response.status_code in (200, 201), response.content

    # The kind's LLM job, started at its endpoint and run by the worker,
    # which keeps two of the three statements (its STATEMENT_MAX_PER_DOCUMENT).
    fake_openai.reply_json({"statements": STATEMENTS})
    body = {"project": project.pk, "model": fake_openai.model, "budget": "1"}
    estimate = admin.post("/api/statement-runs/estimate/", body, format="json")
    assert estimate.status_code == 200, estimate.content
    assert estimate.json()["documents"] == 1
    response = admin.post("/api/statement-runs/", body, format="json")
    assert response.status_code == 201, response.content
    run = response.json()
    wait_for(
        lambda: (
            StatementRun.objects.get(pk=run["id"]).status == "succeeded"
            and Claim.objects.filter(project=project).count() == 2
            and not Claim.objects.filter(
                project=project, checked_at__isnull=True
            ).exists()
        ),
        worker=celery_worker,
    )
    shown = admin.get(f"/api/statement-runs/{run['id']}/").json()
    assert shown["progress_done"] == 1 and float(shown["cost"]) > 0
    # Its claims name the run that made them, as an extraction run's do.
    claims = admin.get(f"/api/claims/?project={project.pk}").json()["results"]
    assert {(c["source_run"], c["source_run_type"]) for c in claims} == {
        (run["id"], "statement run")
    }
    [request] = fake_openai.requests
    assert MEMO in str(request.body["messages"])

    page = new_page()
    log_in(page, expert.username, "ann1-pass")
    page.goto(f"/projects/{project.pk}/label/")
    page.wait_for_selector("#item:not([hidden])")
    shown = {}
    for key in ("s", "u"):
        claim = page.inner_text(".statement")
        # The partial shows the claim and every sentence holding its words,
        # best first with its share; the document highlights those sentences.
        assert claim.startswith("the board")
        assert page.locator(".statement-evidence .sentence").all_inner_texts() == [
            "The budget was approved by the board.",
            "The board met in March.",
        ]
        assert page.locator(".statement-evidence .share").all_inner_texts() == (
            ["1.00", "0.50"] if "approved" in claim else ["0.75", "0.50"]
        )
        assert page.locator("#doc .d-hit").all_inner_texts() == [
            "The board met in March.",
            "The budget was approved by the board.",
        ]
        if key == "s":
            page.screenshot(path=str(artifacts / "label-test-kind.png"), full_page=True)
        shown[claim] = "safe" if key == "s" else "unsafe"
        label_by_key(page, key)
    wait_all_sent(page)

    assert stored_labels(expert) == shown
    # One label each is all a project without overlap asks: the queue is done.
    assert set(
        Claim.objects.filter(project_id=project.pk).values_list("queue_open", flat=True)
    ) == {False}
    assert page.is_visible("#empty")
    assert page.inner_text("#empty-why") == "Every claim here has the labels it needs."
