"""Answers imported into a consistency project with other models' samples and
checked show, in the labeling screen, the prompt and the whole answer with the
sentence under review highlighted on the left, and on the right each sample's
sentence that decides it, contradicting ones first, with its sample's model,
variant and judgement; the expert labels the sentences by keyboard."""

import pytest

from annotator.claims.checking import claims_check
from annotator.models import Claim
from tests.annotator.factories import jsonl, score_by_word_overlap, upload
from tests.browser.conftest import (
    label_by_key,
    log_in,
    project_over_api,
    stored_labels,
    wait_all_sent,
)
from tests.consistency_data import LAMPORT as ITEM

pytestmark = pytest.mark.django_db(transaction=True)

CONTRADICTED = "Lamport received his PhD from Berkeley in 1972."
BRANDEIS = "Lamport received his PhD from Brandeis in 1972."


def test_answer_sentences_are_labelled_against_the_samples(
    personas, api, new_page, unread_broker, monkeypatch, artifacts
):
    score_by_word_overlap(monkeypatch)
    admin = api(personas.admin)
    expert = personas.annotator
    project = project_over_api(admin, name="bios", kind="consistency", expert=expert)
    response = upload(
        admin, "/api/documents/upload/", project, "answers.jsonl", jsonl(ITEM), "files"
    )
    assert response.status_code == 200, response.content
    assert claims_check(project_id=project.pk).checked == 3
    checked = {p.data["sentence"]: p for p in Claim.objects.filter(project=project)}

    page = new_page()
    log_in(page, expert.username, "ann1-pass")
    page.goto(f"/projects/{project.pk}/label/")
    page.wait_for_selector("#item:not([hidden])")
    shown = {}
    for _ in range(3):
        block = page.inner_text(".cons-block")
        details = checked[block].details
        assert page.inner_text(".cons-prompt") == ITEM["prompt"]
        # The whole answer, the sentence under review highlighted in it.
        assert page.inner_text(".cons-answer") == ITEM["response"]
        assert page.is_hidden("#doc")  # not printed a second time
        background = "e => getComputedStyle(e).backgroundColor"
        assert page.locator(".cons-block").evaluate(background) == "rgb(254, 247, 195)"
        # Each sample's deciding sentence on the right, with its judgement;
        # the project hides scores, so no NLI score is shown.
        judgements = page.locator(".cons-judgement")
        assert judgements.locator(".cons-sentence").all_inner_texts() == [
            j["evidence"] for j in details["judgements"]
        ]
        assert judgements.locator(".cons-label").all_inner_texts() == [
            j["judged"] for j in details["judgements"]
        ]
        assert page.locator(".cons-p").count() == 0
        first = judgements.nth(0)
        assert "cons-deciding" in (first.get_attribute("class") or "")
        if block == CONTRADICTED:
            assert first.locator(".cons-sentence").inner_text() == BRANDEIS
            assert first.locator(".cons-label").inner_text() == "contradicts"
            assert "sample 1 (model-a)" in first.inner_text()
            assert "identity" in first.inner_text()
            page.screenshot(
                path=str(artifacts / "label-consistency.png"), full_page=True
            )
        # The answer on the left, the samples on the right.
        claim_box = page.locator(".lbl-claim").bounding_box()
        samples_box = page.locator(".cons-samples").bounding_box()
        assert samples_box["x"] > claim_box["x"] + claim_box["width"] - 1
        key = "u" if block == CONTRADICTED else "s"
        shown[block] = "unsafe" if key == "u" else "safe"
        label_by_key(page, key)
    wait_all_sent(page)
    assert stored_labels(expert) == shown
    assert set(shown) == set(checked)
