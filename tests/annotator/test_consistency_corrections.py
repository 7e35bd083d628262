"""Corrections runs of a consistency project: the improver, through the real
openai client against the scripted server, corrects the blocks the check
flagged from an error summary and the contradicting sample sentences; the
corrections outlive a re-check, and the expert's decision on one is kept
with the label."""

from decimal import Decimal

import pytest

from annotator.claims import ingest
from annotator.claims.checking import claims_check
from annotator.core.errors import ApplicationError, LabelInvalid
from annotator.kinds.consistency import consistency_runs
from annotator.kinds.consistency import tasks as consistency_tasks
from annotator.kinds.consistency.models import ConsistencyRun
from annotator.labeling import labels
from annotator.models import (
    Claim,
    Document,
    Label,
    RunStatus,
)
from tests.annotator.factories import jsonl, make_project, score_by_word_overlap
from tests.consistency_data import LAMPORT
from tests.fake_openai import Answer

pytestmark = pytest.mark.django_db

PHD = "Lamport received his PhD from Berkeley in 1972."
FIXED = "Lamport received his PhD from Brandeis in 1972."
SUMMARY = "The PhD was from Brandeis, not Berkeley."


def _content(body) -> str:
    return body["messages"][0]["content"]


def _improver(body):
    """By request, not order: the blocks are corrected concurrently."""
    prompt = _content(body)
    if prompt.startswith("I need you to summarize"):
        return Answer(content=f"<summary>{SUMMARY}</summary>")
    assert prompt.startswith("I need you to correct")
    assert SUMMARY in prompt  # the summary goes into the correction request
    assert "Brandeis" in prompt  # and so does the contradicting sentence
    return Answer(content=f"<corrected>{FIXED}</corrected>")


@pytest.fixture
def checked(personas, fake_openai, monkeypatch):
    """A consistency project with the Lamport answer (and a copy) checked:
    the PhD sentence of each contradicted by a sample."""
    score_by_word_overlap(monkeypatch)
    project = make_project(
        kind="consistency",
        llm_base_url=fake_openai.base_url,
        llm_models=["improver", "other"],
        members=[personas.annotator],
    )
    again = {**LAMPORT, "id": "again"}
    ingest.documents_import(
        project=project,
        files=[("answers.jsonl", ingest.stream_of(jsonl(LAMPORT, again).decode()))],
    )
    claims_check(project_id=project.pk)
    flagged = Claim.objects.filter(project=project, verdict="unsafe")
    assert sorted(p.external_id for p in flagged) == ["again#b1", "lamport#b1"]
    return project


def _params(**changes):
    return {"improver": "improver", **changes}


def test_an_estimate_counts_a_summary_and_a_correction_per_flagged_block(
    personas, api, checked, fake_openai
):
    response = api(personas.admin).post(
        "/api/consistency-runs/estimate/",
        {"project": checked.pk, "job": "corrections", "params": _params()},
        format="json",
    )
    assert response.status_code == 200, response.content
    estimate = response.json()
    assert (estimate["job"], estimate["documents"], estimate["calls"]) == (
        "corrections",
        2,
        4,
    )
    assert estimate["calls_by_kind"] == {"summary_calls": 2, "correction_calls": 2}
    assert estimate["models"] == ["improver"]
    without = consistency_runs.run_estimate(
        checked, "corrections", _params(summaries=False)
    )
    assert without.calls_by_kind == {"summary_calls": 0, "correction_calls": 2}
    assert without.prompt_tokens < estimate["prompt_tokens"]
    assert fake_openai.requests == []


def test_a_run_corrects_flagged_blocks_and_the_check_shows_the_correction(
    personas, api, checked, fake_openai, unread_broker
):
    fake_openai.responder = _improver
    run = consistency_runs.consistency_run_start(
        project=checked, job="corrections", budget="1", params=_params()
    )
    assert (run.job, run.model, run.progress_total) == ("corrections", "improver", 2)

    assert consistency_tasks.run_consistency(run.pk)["status"] == RunStatus.SUCCEEDED

    run.refresh_from_db()
    assert (run.progress_done, run.error) == (2, "")
    assert run.usage["improver"]["requests"] == 4
    assert run.cost > 0
    for key in ("lamport", "again"):
        document = Document.objects.get(project=checked, external_id=key)
        start = LAMPORT["response"].index(PHD)
        assert document.metadata["corrections"] == [
            {
                "start": start,
                "end": start + len(PHD),
                "text": PHD,
                "correction": FIXED,
                "summary": SUMMARY,
            }
        ]
    # The corrected answers' blocks were reset; the check shows each
    # correction with its block, and none with the accurate blocks.
    assert claims_check(project_id=checked.pk).checked == 6
    phd = Claim.objects.get(project=checked, external_id="lamport#b1")
    assert (phd.verdict, phd.details["correction"]) == ("unsafe", FIXED)
    assert phd.details["summary"] == SUMMARY
    first = Claim.objects.get(project=checked, external_id="lamport#b0")
    assert first.details["correction"] is None

    # A re-check keeps them (they live with the answer); nothing is left to do.
    Claim.objects.filter(project=checked).update(checked_at=None)
    claims_check(project_id=checked.pk)
    phd.refresh_from_db()
    assert phd.details["correction"] == FIXED
    assert (
        consistency_runs.run_estimate(checked, "corrections", _params()).documents == 0
    )
    assert consistency_tasks.run_consistency(run.pk)["status"] == RunStatus.SUCCEEDED
    assert len(fake_openai.bodies) == 4


def test_an_unusable_correction_is_noted_and_the_block_is_tried_again_later(
    personas, checked, fake_openai, unread_broker
):
    fake_openai.responder = lambda body: Answer(content="I cannot help with that.")
    run = consistency_runs.consistency_run_start(
        project=checked,
        job="corrections",
        budget="1",
        params=_params(summaries=False),
    )
    assert consistency_tasks.run_consistency(run.pk)["status"] == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert "unusable correction" in run.error
    assert "2 answers left with flagged blocks to correct" in run.error
    assert not any(
        "corrections" in d.metadata for d in Document.objects.filter(project=checked)
    )
    assert (
        consistency_runs.run_estimate(checked, "corrections", _params()).documents == 2
    )


def test_a_budget_hit_stops_before_passing_it_and_keeps_what_finished(
    personas, checked, fake_openai, unread_broker
):
    fake_openai.responder = _improver
    one = consistency_runs.run_estimate(checked, "corrections", _params()).cost / 2
    run = consistency_runs.consistency_run_start(
        project=checked,
        job="corrections",
        budget=one * Decimal("1.2"),
        params=_params(),
    )
    assert consistency_tasks.run_consistency(run.pk)["status"] == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert run.cost <= run.budget
    assert run.error.startswith("Stopped before the budget")
    corrected = [
        d.external_id
        for d in Document.objects.filter(project=checked)
        if "corrections" in d.metadata
    ]
    assert len(corrected) <= 1
    assert "answers left with flagged blocks to correct" in run.error


def test_new_samples_drop_the_corrections_made_from_the_old_ones(checked):
    from annotator.kinds.consistency.sampling import SAMPLES

    document = Document.objects.get(project=checked, external_id="lamport")
    document.metadata = {
        **document.metadata,
        "samples": [],
        "corrections": [{"start": 0, "end": 3, "text": "Les", "correction": "X"}],
    }
    document.save()
    fresh = Document.objects.get(pk=document.pk)
    assert SAMPLES.store(fresh, document, None, [])
    assert "corrections" not in fresh.metadata


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"improver": None}, "params.improver must be a model name"),
        ({"improver": "gpt-x"}, "model 'gpt-x' is not one of the project's models"),
        ({"summaries": "yes"}, "params.summaries must be true or false"),
        ({"samplers": ["improver"]}, "unknown params ['samplers']"),
    ],
)
def test_bad_params_are_refused_by_name(checked, changes, message):
    with pytest.raises(ApplicationError, match=message.replace("[", r"\[")):
        consistency_runs.run_estimate(checked, "corrections", _params(**changes))
    with pytest.raises(ApplicationError, match="job must be one of"):
        consistency_runs.run_estimate(checked, "rewrite", _params())
    assert ConsistencyRun.objects.count() == 0


def test_the_experts_decision_on_a_suggestion_is_kept_with_the_label(
    personas, api, checked
):
    phd = Claim.objects.get(project=checked, external_id="lamport#b1")
    expert = api(personas.annotator)
    response = expert.post(
        "/api/labels/",
        {
            "claim": phd.pk,
            "label": "unsafe",
            "suggestion": "accepted",
            "correction": {"sentence": FIXED},
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["suggestion"] == "accepted"
    stored = Label.objects.get(claim=phd)
    assert (stored.suggestion, stored.correction) == ("accepted", {"sentence": FIXED})

    with pytest.raises(LabelInvalid, match="an accepted suggestion must be"):
        labels.label_submit(
            claim=phd,
            annotator=personas.admin,
            label="unsafe",
            suggestion="accepted",
        )
    with pytest.raises(LabelInvalid, match="suggestion: empty or one of"):
        labels.label_submit(
            claim=phd, annotator=personas.admin, label="unsafe", suggestion="ok"
        )
    rejected, _ = labels.label_submit(
        claim=phd, annotator=personas.admin, label="unsafe", suggestion="rejected"
    )
    assert rejected.suggestion == "rejected" and rejected.correction is None
    with pytest.raises(LabelInvalid, match="cannot correct block"):
        labels.label_submit(
            claim=phd,
            annotator=personas.admin,
            label="unsafe",
            correction={"sentence": FIXED, "block": 2},
        )


def test_the_export_keeps_the_decision_and_the_guideline_version(personas, checked):
    from annotator.claims.selectors import export_rows
    from annotator.labeling import guidelines

    guideline, _ = guidelines.guideline_save(
        project=checked, user=personas.admin, text="# Response block\nCheck dates."
    )
    phd = Claim.objects.get(project=checked, external_id="lamport#b1")
    labels.label_submit(
        claim=phd,
        annotator=personas.annotator,
        label="unsafe",
        suggestion="accepted",
        correction={"sentence": FIXED},
        guideline_version=guideline.version,
    )
    [row] = list(export_rows(project=checked, kind="labels"))
    assert row["claim_id"] == "lamport#b1"
    assert (row["suggestion"], row["correction"]) == ("accepted", {"sentence": FIXED})
    assert row["guideline_version"] == guideline.version


def test_an_unverified_block_is_corrected_too_as_the_paper_does(checked):
    # A block the samples do not settle (NEUTRAL) gets no verdict, yet the
    # improver corrects it beside the contradicted ones.
    block = Claim.objects.filter(project=checked, verdict="safe").order_by("pk")[0]
    Claim.objects.filter(pk=block.pk).update(verdict="unscored", reason="unverified")
    estimate = consistency_runs.run_estimate(checked, "corrections", _params())
    assert estimate.calls_by_kind == {"summary_calls": 3, "correction_calls": 3}
