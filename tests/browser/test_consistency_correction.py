"""A consistency project end to end in the browser: answers imported with
samples and checked, the admin estimates and starts a corrections run under a
budget on the dashboard, the improver (the scripted server, through the real
openai client) corrects the contradicted sentences, and the expert sees each
correction as a word diff, accepts one and rejects the other while labelling."""

import json

import pytest

from annotator.claims import ingest
from annotator.claims.checking import claims_check
from annotator.kinds.consistency import consistency_runs
from annotator.kinds.consistency.models import ConsistencyRun
from annotator.models import (
    Claim,
    Label,
)
from tests.annotator.factories import make_project, score_by_word_overlap
from tests.browser.conftest import label_by_key, log_in, wait_all_sent
from tests.consistency_data import LAMPORT
from tests.fake_openai import Answer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHD = "Lamport received his PhD from Berkeley in 1972."
FIXED = "Lamport received his PhD from Brandeis in 1972."


def _improver(body):
    prompt = body["messages"][0]["content"]
    if prompt.startswith("I need you to summarize"):
        return Answer(content="<summary>Brandeis, not Berkeley.</summary>")
    return Answer(content=f"<corrected>{FIXED}</corrected>")


def test_a_correction_run_is_started_and_its_corrections_accepted_or_rejected(
    personas, new_page, fake_openai, monkeypatch, artifacts, unread_broker
):
    # unread_broker: the check the import sends must not reach a worker an
    # earlier test left running, which would judge with another scorer.
    score_by_word_overlap(monkeypatch)
    fake_openai.responder = _improver
    project = make_project(
        kind="consistency",
        llm_base_url=fake_openai.base_url,
        llm_models=["improver"],
        members=[personas.annotator],
    )
    items = [LAMPORT, {**LAMPORT, "id": "again"}]
    data = "".join(json.dumps(item) + "\n" for item in items)
    ingest.documents_import(
        project=project, files=[("answers.jsonl", ingest.stream_of(data))]
    )
    claims_check(project_id=project.pk)

    page = new_page()
    log_in(page, "admin", "admin-pass")
    page.goto(f"/projects/{project.pk}/dashboard/")
    panel = page.locator("#sampling")
    page.select_option("#sample-job", "corrections")
    assert page.is_hidden("#sample-models") and page.is_visible("#correct-improver")
    assert page.input_value("#correct-improver") == "improver"
    panel.get_by_role("button", name="Estimate").click()
    page.wait_for_function(
        "() => document.querySelector('#sample-estimate').textContent.startsWith("
        "'2 answers with flagged sentences to correct with improver: 4 calls')"
    )
    page.fill("#sample-budget", "0.50")
    panel.get_by_role("button", name="Start run").click()
    page.wait_for_selector("#sample-run:not([hidden])")
    assert page.text_content("#sr-job") == "Corrections"
    run = ConsistencyRun.objects.get(project=project)
    assert (run.job, run.params["improver"], str(run.budget)) == (
        "corrections",
        "improver",
        "0.500000",
    )
    # What the worker does (tests/annotator/test_consistency_sampling.py runs
    # a consistency run through a real worker), then the check it sends.
    consistency_runs.consistency_run_execute(run_id=run.pk)
    claims_check(project_id=project.pk)
    page.wait_for_function(
        "() => document.querySelector('#sr-status').textContent === 'succeeded'"
    )

    page = new_page()
    log_in(page, personas.annotator.username, "ann1-pass")
    page.goto(f"/projects/{project.pk}/label/")
    page.wait_for_selector("#item:not([hidden])")
    decisions = {}
    for _ in range(6):
        block = page.inner_text(".cons-block")
        suggestion = page.locator(".cons-suggestion")
        if block != PHD:
            assert suggestion.is_hidden()
            label_by_key(page, "s")
            continue
        assert suggestion.is_visible()
        assert suggestion.locator(
            "[data-suggestion-diff] .d-del"
        ).all_inner_texts() == ["Berkeley"]
        assert suggestion.locator(
            "[data-suggestion-diff] .d-ins"
        ).all_inner_texts() == ["Brandeis"]
        assert "Brandeis, not Berkeley." in suggestion.inner_text()
        key = "a" if not decisions else "r"
        page.keyboard.press(key)
        state = "Accepted" if key == "a" else "Rejected"
        assert (
            suggestion.locator("[data-suggestion-state]").inner_text().startswith(state)
        )
        if key == "a":
            page.screenshot(
                path=str(artifacts / "label-consistency-correction.png"),
                full_page=True,
            )
        document = page.inner_text("#doc-id")
        decisions[document] = "accepted" if key == "a" else "rejected"
        label_by_key(page, "u")
    wait_all_sent(page)
    assert sorted(decisions.values()) == ["accepted", "rejected"]
    for document, decision in decisions.items():
        phd = Claim.objects.get(
            project=project, document__external_id=document, data__sentence=PHD
        )
        label = Label.objects.get(claim=phd, annotator=personas.annotator)
        assert (label.label, label.suggestion) == ("unsafe", decision)
        accepted = {"sentence": FIXED} if decision == "accepted" else None
        assert label.correction == accepted
