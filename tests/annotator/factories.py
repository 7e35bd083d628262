"""Row factories: the smallest valid rows, overridable by keyword."""

from __future__ import annotations

import copy
import json
from itertools import count

from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from annotator.models import Claim, Document, Project
from tests.scorers import WordOverlapScorer

_n = count(1)

SCHEMA = {
    "name": "asylex",
    "entity_types": {
        "HearingDate": {
            "fields": {"yyyy": "year", "mm": "month", "dd": "day"},
            "render": "date",
        },
        "JudgeName": {"fields": {"first_name": "", "last_name": ""}},
        "GPE": {"display_name": "GPE"},
    },
}

DOC_TEXT = (
    "The hearing took place in Toronto on 17 January 2012 before "
    "member Jane Smith. The claimant is a citizen of Colombia."
)


def make_project(*, name=None, members=(), **fields) -> Project:
    if fields.get("kind", "extraction") == "extraction":
        fields.setdefault("options", {"entity_schema": copy.deepcopy(SCHEMA)})
    project = Project.objects.create(name=name or f"project-{next(_n)}", **fields)
    project.members.set(members)
    return project


def make_document(project, *, external_id=None, text=DOC_TEXT, **fields) -> Document:
    return Document.objects.create(
        project=project,
        external_id=external_id or f"doc-{next(_n)}",
        text=text,
        **fields,
    )


def make_claim(
    document,
    *,
    external_id=None,
    type="GPE",
    value="Toronto",
    context="took place in Toronto",
    **fields,
) -> Claim:
    """An extracted field's claim (``type``, ``value`` and ``context`` its
    data), or another kind's where ``data`` is given; checked, as experts are
    handed claims only once checked (``checked_at=None``: one waiting for its
    check)."""
    fields.setdefault("data", {"type": type, "value": value, "context": context})
    fields.setdefault("checked_at", timezone.now())
    return Claim.objects.create(
        project=document.project,
        document=document,
        external_id=external_id or f"pred-{next(_n)}",
        **fields,
    )


def aligned(document, start: int, end: int, score: float = 1.0) -> dict:
    """The check's fields for a context aligned to ``document[start:end]``."""
    text = document.text[start:end]
    return dict(
        premise=text,
        evidence=[
            dict(
                source=document.external_id,
                start=start,
                end=end,
                text=text,
                role="aligned",
                score=score,
            )
        ],
        evidence_score=score,
    )


def jsonl(*rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")


def documents_jsonl() -> bytes:
    return jsonl(
        {"id": "d1", "text": DOC_TEXT, "metadata": {"court": "IRB"}},
        {"id": "d2", "text": "Nothing relevant happened in this short decision."},
    )


def claims_jsonl() -> bytes:
    return jsonl(
        {
            "id": "p-found",
            "document_id": "d1",
            "model": "gpt-x",
            "type": "GPE",
            "value": "Toronto",
            "context": "The hearing took place in Toronto",
        },
        {
            "id": "p-date",
            "document_id": "d1",
            "model": "gpt-x",
            "type": "HearingDate",
            "value": {"yyyy": "2012", "mm": "01", "dd": "17"},
            "context": "on 17 January 2012",
        },
        {
            "id": "p-invented",
            "document_id": "d1",
            "model": "llama",
            "type": "GPE",
            "value": "Montreal",
            "context": "the appeal was heard in Montreal by a panel of three",
        },
    )


def upload(client, url, project, name, content: bytes, field="file"):
    """POST ``content`` as the file ``name`` to an upload endpoint."""
    return client.post(
        url,
        {"project": project.pk, field: SimpleUploadedFile(name, content)},
        format="multipart",
    )


def train_on_labels(project):
    """A one-epoch training run on the project's labels alone (no silver
    stage), run in this process: the scorer it made and its metadata."""
    from pathlib import Path

    from annotator import tasks
    from annotator.models import ScorerModel
    from annotator.training import runs as training_runs

    run = training_runs.training_run_start(
        project=project,
        params={"stages": ["human"], "human_epochs": 1, "batch_size": 8},
        enqueue=False,
    )
    assert tasks.train_scorer(run.pk) == {"run": run.pk, "status": "succeeded"}
    scorer = ScorerModel.objects.get(project=project)
    return scorer, json.loads((Path(scorer.path) / "metadata.json").read_text())


def score_by_word_overlap(monkeypatch) -> None:
    """Check runs of this test score with ``WordOverlapScorer``, as if it
    were the project's active scorer (version "1")."""
    from annotator.claims import checking

    monkeypatch.setattr(
        checking, "project_scorer", lambda project: (WordOverlapScorer(), "1")
    )
