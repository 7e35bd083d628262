"""A kind that exists only in the tests (tests/checkers: a checker, its
``Project.kind``, its claim partial) goes through the whole app: made over the
API, imported, checked, shown by its own partial and labelled by keyboard."""

import copy

import pytest

from annotator.claims.checking import predictions_check
from annotator.models import Prediction
from tests.annotator.factories import jsonl, upload
from tests.browser.conftest import (
    label_by_key,
    log_in,
    project_over_api,
    stored_labels,
    wait_all_sent,
)
from tests.checkers import TEMPLATES
from tests.checkers.statement import KIND

pytestmark = pytest.mark.django_db(transaction=True)

MEMO = "The board met in March. The budget was approved by the board."


@pytest.fixture
def with_test_partials(settings):
    templates = copy.deepcopy(settings.TEMPLATES)
    templates[0]["DIRS"] = [*templates[0]["DIRS"], TEMPLATES]
    settings.TEMPLATES = templates


def test_a_test_only_kind_is_labelled_end_to_end(
    personas, api, new_page, with_test_partials, artifacts
):
    admin = api(personas.admin)
    expert = personas.annotator
    project = project_over_api(admin, name="memos", kind=KIND, expert=expert)
    documents = jsonl({"id": "memo", "text": MEMO})
    claims = jsonl(
        *(
            {"id": f"c{i}", "document_id": "memo", "type": "statement", "value": v}
            for i, v in enumerate(
                ["the board approved the budget", "the board rejected the budget"]
            )
        )
    )
    response = upload(
        admin, "/api/documents/upload/", project, "memo.jsonl", documents, "files"
    )
    assert response.status_code in (200, 201), response.content
    response = upload(admin, "/api/predictions/import/", project, "c.jsonl", claims)
    assert response.status_code in (200, 201), response.content
    assert predictions_check(project_id=project.pk).checked == 2

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
        Prediction.objects.filter(project_id=project.pk).values_list(
            "queue_open", flat=True
        )
    ) == {False}
    assert page.is_visible("#empty")
