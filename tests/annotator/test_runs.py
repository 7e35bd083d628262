"""The run lifecycle all three kinds of run share."""

import pytest
from django.db.models import Q

from annotator.kinds.extraction.models import ExtractionRun
from annotator.models import (
    RunStatus,
    TrainingRun,
)
from annotator.runs.lifecycle import run_claim, run_end
from tests.annotator.factories import make_project

pytestmark = pytest.mark.django_db


def test_a_run_is_claimed_once_pending_and_again_only_when_it_can_resume():
    run = ExtractionRun.objects.create(project=make_project(), model="m")
    assert run_claim(ExtractionRun, run.pk)
    run.refresh_from_db()
    started = run.started_at
    assert run.status == RunStatus.RUNNING and run.heartbeat_at
    # A worker taking over keeps the first start.
    assert run_claim(ExtractionRun, run.pk)
    run.refresh_from_db()
    assert run.started_at == started

    training = TrainingRun.objects.create(project=run.project)
    assert run_claim(TrainingRun, training.pk, resume=False)
    assert not run_claim(TrainingRun, training.pk, resume=False)


def test_ending_puts_the_reason_first_and_happens_once():
    run = ExtractionRun.objects.create(
        project=make_project(), model="m", error="document d3: refused"
    )
    assert not run_end(
        ExtractionRun, run.pk, RunStatus.FAILED, note="x", where=Q(status="running")
    )
    assert run_end(ExtractionRun, run.pk, RunStatus.FAILED, note="key rejected")
    run.refresh_from_db()
    assert run.error == "key rejected\ndocument d3: refused" and run.finished_at
    assert not run_end(ExtractionRun, run.pk, RunStatus.SUCCEEDED)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED

    clean = ExtractionRun.objects.create(project=run.project, model="m")
    assert run_end(ExtractionRun, clean.pk, RunStatus.FAILED, note="only reason")
    clean.refresh_from_db()
    assert clean.error == "only reason"
