"""Day one on real documents: a project with zero labels gets its first
scorer from the starter scorer, trained on silver pairs of its own
documents, and flags the unsafe ones among hand-checked claims over
real court opinions (bench/data/caselaw_claims.jsonl, dev split: the
test split is only run by the benchmark to report, never asserted on here;
`make setup` builds the starter without the benchmark's opinions). The
project's scorer trains on its own documents, as the app does: the figure is
transductive."""

from __future__ import annotations

import io
import json

import pytest

from annotator.claims import checking, ingest
from annotator.models import Claim, RunStatus, ScorerModel
from annotator.training import execute, schedule
from pipeline.evaluate import flag_metrics
from pipeline.score import model_folder_problem
from tests.conftest import ROOT

OPINIONS = ROOT.parent / "shared" / "data" / "caselaw" / "opinions.jsonl"
BENCHMARK = ROOT / "bench" / "data" / "caselaw_claims.jsonl"
STARTER = ROOT / "var" / "scorers" / "starter"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not OPINIONS.is_file(), reason="the court opinions live beside the repository"
    ),
]


def _jsonl(rows) -> io.BytesIO:
    return io.BytesIO("".join(json.dumps(r) + "\n" for r in rows).encode())


@pytest.mark.django_db(transaction=True)
def test_zero_labels_flag_unsafe_claims_on_real_opinions(
    personas, settings, unread_broker
):
    assert model_folder_problem(STARTER) is None, "`make setup` builds the starter"
    settings.FIRST_SCORER_AUTO = True
    settings.STARTER_SCORER = STARTER
    settings.TRAINING_CONFIG = {}
    rows = [
        json.loads(line)
        for line in BENCHMARK.open(encoding="utf-8")
        if json.loads(line)["split"] == "dev"
    ]
    wanted = {r["document_id"] for r in rows}
    project = personas.project
    ingest.documents_import(
        project=project,
        files=[
            (
                "opinions.jsonl",
                _jsonl(
                    {"id": o["id"], "text": o["text"]}
                    for o in map(json.loads, OPINIONS.open(encoding="utf-8"))
                    if o["id"] in wanted
                ),
            )
        ],
    )
    keys = ("id", "document_id", "model", "type", "value", "context")
    ingest.claims_import(
        project=project, stream=_jsonl({k: r[k] for k in keys} for r in rows)
    )
    checking.claims_check(project_id=project.pk)
    claims = Claim.objects.filter(project=project)
    assert claims.count() == len(rows)
    # No scorer yet: nothing is safe; what the evidence does not settle is
    # unscored.
    assert set(claims.values_list("verdict", flat=True)) == {"unscored", "unsafe"}

    run = schedule.first_scorer_due(project)
    run = execute.training_run_execute(run_id=run.pk)
    assert run.status == RunStatus.SUCCEEDED, (run.error, run.log)
    assert run.trigger == "first" and run.base_model == str(STARTER)
    scorer = ScorerModel.objects.get(project=project)
    assert scorer.is_active and scorer.metrics["validation"]["source"] == "silver"

    checking.claims_check(project_id=project.pk)
    verdicts = dict(claims.values_list("external_id", "verdict"))
    assert set(verdicts.values()) <= {"safe", "unsafe"}
    assert not claims.filter(verdict="safe", score=None).exists()
    unsafe = [r["label"] == "unsafe" for r in rows]
    flagged = [verdicts[r["id"]] == "unsafe" for r in rows]
    metrics = flag_metrics(flagged, unsafe)
    # Dev F1 was 0.889 when this floor was set (starter built without the
    # benchmark's opinions).
    assert metrics["f1"] >= 0.85, (metrics, scorer.threshold, run.log)
