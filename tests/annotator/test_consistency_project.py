"""A consistency project: answers imported with their prompt and other models'
samples (each its document), their sentences found and judged offline by the
check run, shown to experts without the scores the project hides, and
retrained from expert labels."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from annotator.claims import ingest
from annotator.claims.checking import claims_check, project_checker
from annotator.models import Claim, Document, Label
from annotator.training.data import labelled_data
from tests.annotator.factories import (
    jsonl,
    make_project,
    score_by_word_overlap,
    train_on_labels,
    upload,
)
from tests.consistency_data import LAMPORT

pytestmark = pytest.mark.django_db

WATER = {
    "index": 7,  # FELM's id
    "prompt": "What is the boiling point of water at sea level?",
    "response": "Water boils at 100 degrees Celsius at sea level.",
    "samples": ["At sea level water boils at 100 degrees Celsius."],
}
BRANDEIS = "Lamport received his PhD from Brandeis in 1972."


def _consistency(personas, **fields):
    return make_project(kind="consistency", members=[personas.annotator], **fields)


def _import(project, *lines, name="answers.jsonl"):
    return ingest.documents_import(
        project=project, files=[(name, ingest.stream_of(_lines(*lines)))]
    )


def _lines(*lines) -> str:
    return "".join(
        (line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines
    )


def _blocks(project):
    return {p.external_id: p for p in Claim.objects.filter(project=project)}


# --- import --------------------------------------------------------------------


def test_answers_come_in_over_the_api_with_bad_lines_named(
    personas, api, unread_broker
):
    project = _consistency(personas)
    bad_sample = {**WATER, "index": "8", "samples": [{"model": "m"}]}
    unasked = {"id": "x", "response": "An answer to nothing."}
    data = _lines(LAMPORT, "{not json", bad_sample, unasked, WATER)
    response = upload(
        api(personas.admin),
        "/api/documents/upload/",
        project,
        "answers.jsonl",
        data.encode(),
        "files",
    )
    assert response.status_code == 207, response.content
    report = response.json()
    assert (report["created"], report["updated"], report["unchanged"]) == (2, 0, 0)
    assert [(e["line"], e["message"]) for e in report["errors"]] == [
        (2, "invalid JSON: Expecting property name enclosed in double quotes"),
        (3, "samples[0] must be a string or an object with 'text'"),
        (4, "field 'prompt' must be a non-empty string"),
    ]

    document = Document.objects.get(project=project, external_id="lamport")
    assert document.text == LAMPORT["response"]
    assert document.metadata == {
        "prompt": LAMPORT["prompt"],
        "samples": LAMPORT["samples"],
    }
    water = Document.objects.get(project=project, external_id="7")
    assert water.metadata["samples"] == [{"text": WATER["samples"][0]}]
    # The sentences are the check's to find: none yet.
    assert not Claim.objects.filter(project=project).exists()


def test_answers_come_in_on_the_set_up_page_and_by_command(
    personas, client, unread_broker, tmp_path
):
    project = _consistency(personas)
    client.force_login(personas.admin)
    response = client.get(f"/projects/{project.pk}/setup/")
    html = response.content.decode()
    assert "Upload answers" in html and "one answer a line" in html
    response = client.post(
        f"/projects/{project.pk}/setup/",
        {
            "action": "documents",
            "files": [SimpleUploadedFile("a.jsonl", jsonl(LAMPORT, {"id": "x"}))],
        },
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "Items import" in html
    assert "1 created, 0 updated, 0 unchanged, 1 skipped" in html

    path = tmp_path / "water.jsonl"
    path.write_text(_lines(WATER))
    call_command("import_documents", project.name, str(path))
    assert Document.objects.filter(project=project, external_id="7").exists()


def test_an_answer_sent_again_updates_in_place_and_is_checked_again(
    personas, unread_broker, monkeypatch
):
    score_by_word_overlap(monkeypatch)
    project = _consistency(personas)
    _import(project, LAMPORT, WATER)
    claims_check(project_id=project.pk)
    blocks = _blocks(project)
    assert len(blocks) == 4
    Label.objects.create(
        claim=blocks["lamport#b0"], annotator=personas.annotator, label="safe"
    )

    report = _import(project, LAMPORT, WATER)
    assert (report.created, report.updated, report.unchanged) == (0, 0, 2)
    assert not Claim.objects.filter(project=project, checked_at=None).exists()

    fixed = {**LAMPORT, "response": LAMPORT["response"].replace("Berkeley", "Brandeis")}
    more = {**WATER, "samples": [*WATER["samples"], "Water boils at 100 C."]}
    report = _import(project, fixed, more)
    assert (report.created, report.updated, report.unchanged) == (0, 2, 0)
    assert Document.objects.filter(project=project).count() == 2
    blocks = _blocks(project)
    assert sorted(blocks) == ["7#b0", "lamport#b0", "lamport#b1", "lamport#b2"]
    # Every sentence of a changed answer is checked again: the labelled one
    # keeps its label, the others are found anew in the new text.
    assert all(p.checked_at is None and p.details == {} for p in blocks.values())
    assert blocks["lamport#b1"].data["sentence"] == BRANDEIS
    assert blocks["lamport#b0"].labels.count() == 1

    claims_check(project_id=project.pk)
    blocks = _blocks(project)
    assert blocks["lamport#b1"].verdict == "safe"
    assert blocks["7#b0"].details["samples"] == 2


# --- the check run -------------------------------------------------------------


def test_the_check_run_stores_one_claim_per_block_with_evidence(
    personas, unread_broker, monkeypatch
):
    score_by_word_overlap(monkeypatch)
    project = _consistency(personas)
    _import(project, LAMPORT)
    seen = []

    summary = claims_check(
        project_id=project.pk, progress=lambda done, total: seen.append((done, total))
    )

    assert summary.checked == 3 and seen == [(3, 3)]
    assert (summary.safe, summary.unsafe, summary.unscored) == (2, 1, 0)
    blocks = _blocks(project)
    assert sorted(blocks) == ["lamport#b0", "lamport#b1", "lamport#b2"]
    phd = blocks["lamport#b1"]
    sentence = "Lamport received his PhD from Berkeley in 1972."
    assert phd.data == {"sentence": sentence, "block": 1, "start": 40, "end": 87}
    assert (phd.hypothesis, phd.extra) == (sentence, {})
    assert (phd.verdict, phd.reason) == ("unsafe", "contradicted")
    assert phd.scored_by == "overlap"
    assert phd.score == pytest.approx(0.1)
    first = phd.evidence[0]
    assert (first["source"], first["role"], first["text"], first["score"]) == (
        "sample 1 (model-a)",
        "sample",
        BRANDEIS,
        None,
    )
    sample = LAMPORT["samples"][0]["text"]
    assert sample[first["start"] : first["end"]] == BRANDEIS
    assert phd.premise == BRANDEIS
    details = phd.details
    assert details["prompt"] == LAMPORT["prompt"]
    assert details["before"] + sentence + details["after"] == LAMPORT["response"]
    assert [j["label"] for j in details["judgements"]] == ["CONTRADICTION", "NEUTRAL"]
    assert details["judgements"][0]["p"] == pytest.approx(7 / 8)
    assert blocks["lamport#b0"].verdict == "safe"

    # Run twice: nothing left to check.
    assert claims_check(project_id=project.pk).checked == 0


def test_without_samples_or_a_scorer_the_blocks_are_unscored(
    personas, unread_broker, settings
):
    settings.DEFAULT_SCORER = ""
    project = _consistency(personas)
    lonely = {"id": "lonely", "prompt": "Say something.", "response": "Sky is blue."}
    _import(project, LAMPORT, lonely)
    claims_check(project_id=project.pk)
    blocks = _blocks(project)
    assert {p.verdict for p in blocks.values()} == {"unscored"}
    assert blocks["lonely#b0"].evidence == []
    # The expert still reads each sample's sentence most about the block.
    assert blocks["lamport#b1"].evidence[0]["text"] == BRANDEIS


@pytest.mark.parametrize("shown", [True, False])
def test_experts_see_the_judgements_and_scores_only_where_the_project_shows_them(
    personas, api, unread_broker, monkeypatch, shown
):
    score_by_word_overlap(monkeypatch)
    project = _consistency(personas, show_machine_scores=shown, gold_share=0)
    _import(project, LAMPORT)
    claims_check(project_id=project.pk)

    response = api(personas.annotator).post(
        f"/api/projects/{project.pk}/queue/next/", {"count": 10}, format="json"
    )

    assert response.status_code == 200, response.content
    items = {i["external_id"]: i for i in response.json()["items"]}
    details = items["lamport#b1"]["details"]
    judgements = details["judgements"]
    assert [j["label"] for j in judgements] == ["CONTRADICTION", "NEUTRAL"]
    assert judgements[0]["evidence"] == BRANDEIS
    assert details["before"] and details["prompt"] == LAMPORT["prompt"]
    for key in ("block_score", "block_label"):
        assert (key in details) is shown
    assert all(("p" in j) is shown for j in judgements)
    assert ("machine" in items["lamport#b1"]) is shown
    assert all(e["score"] is None for e in items["lamport#b1"]["evidence"])


def test_the_labeling_page_renders_the_consistency_partial(
    personas, client, unread_broker, monkeypatch
):
    score_by_word_overlap(monkeypatch)
    project = _consistency(personas)
    _import(project, LAMPORT)
    claims_check(project_id=project.pk)
    client.force_login(personas.annotator)
    response = client.get(f"/projects/{project.pk}/label/")
    html = response.content.decode()
    assert response.status_code == 200
    assert 'class="lbl-evidence cons-samples"' in html
    # Scores hidden: the partial has no place for them.
    assert 'class="cons-p"' not in html and "cons-block-score" not in html


# --- retraining ----------------------------------------------------------------


def _team(i: int) -> dict:
    right = i % 2 == 0
    return {
        "id": f"t{i}",
        "prompt": f"Where does team {i} play?",
        "response": f"Team {i} plays in {'Lyon' if right else 'Oslo'}. "
        "The club wears blue shirts.",
        "samples": [
            f"Team {i} plays in Lyon. The club wears blue shirts.",
            f"Team {i} has always played in Lyon.",
        ],
    }


def _label_blocks(project, annotator):
    for p in Claim.objects.filter(project=project):
        wrong = "Oslo" in p.data["sentence"]
        Label.objects.create(
            claim=p, annotator=annotator, label="unsafe" if wrong else "safe"
        )


def test_expert_labels_give_the_judge_its_training_pairs(
    personas, unread_broker, settings
):
    settings.DEFAULT_SCORER = ""
    project = _consistency(personas, gold_share=0)
    _import(project, _team(1), _team(2))
    claims_check(project_id=project.pk)
    _label_blocks(project, personas.annotator)

    data = labelled_data(project, gold_set=False)
    checker = project_checker(project, data.documents)
    pairs = checker.training_pairs(data.claims, only=set(data.labels))
    by_block = {(p.hypothesis, p.premise, data.labels[p.claim_id].label) for p in pairs}
    assert by_block == {
        ("Team 1 plays in Oslo.", "Team 1 plays in Lyon.", "unsafe"),
        ("The club wears blue shirts.", "The club wears blue shirts.", "safe"),
        ("Team 2 plays in Lyon.", "Team 2 plays in Lyon.", "safe"),
    }
    assert len(pairs) == 4


@pytest.mark.django_db(transaction=True)
def test_expert_labels_retrain_the_offline_judge(
    personas, settings, tmp_path, unread_broker
):
    settings.VAR_DIR = tmp_path
    settings.DEFAULT_SCORER = ""
    project = _consistency(personas, gold_share=0.3)
    _import(project, *(_team(i) for i in range(12)))
    claims_check(project_id=project.pk)
    _label_blocks(project, personas.annotator)

    scorer, metadata = train_on_labels(project)
    assert metadata["kind"] == "consistency"
    assert metadata["label_counts"]["human_train"] > 0
    # Measured on the gold set's labels through the consistency check.
    assert scorer.gold_f1 is not None
