"""The scorer registry: a trained version measured on the gold set beside the
active scorer, registered, and promoted only if it is not worse. Activating
any version by hand (promote or roll back) is ``checking.scorer_activate``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotator.claims.checking import project_checker, scorer_activate
from annotator.models import Project, RunStatus, ScorerModel, TrainingRun
from annotator.runs.lifecycle import run_ended
from annotator.training.data import LabelledData
from annotator.training.runs import TrainingStopped, log_line
from pipeline.evaluate import flag_metrics
from pipeline.score import METADATA_FILE, NLIScorer


def gold_evaluate(
    *, project: Project, data: LabelledData, model: str, threshold: float
) -> dict[str, Any] | None:
    """Precision / recall / F1 of flagging unsafe on the gold set's labels,
    the project's whole check counted (for extraction, alignment then the
    scorer); None without labels."""
    measured = gold_measure(
        project=project, data=data, model=model, threshold=threshold
    )
    return None if measured is None else measured[0]


def gold_measure(
    *, project: Project, data: LabelledData, model: str, threshold: float
) -> tuple[dict[str, Any], list[Any]] | None:
    """``gold_evaluate``'s metrics and the findings they count (their scores
    fit the version's calibration); None without labels."""

    if not data.labels:
        return None
    checker = project_checker(project, data.documents)
    report = checker.check(
        [p for p in data.claims if p.id in data.labels],
        scorer=NLIScorer(model, threshold=threshold),
    )
    unsafe = [data.labels[f.claim_id].label == "unsafe" for f in report.findings]
    metrics = flag_metrics([f.verdict == "unsafe" for f in report.findings], unsafe)
    return metrics, report.findings


def _next_version(project: Project) -> str:
    numbers = [
        int(v[1:])
        for v in ScorerModel.objects.filter(project=project).values_list(
            "version", flat=True
        )
        if v[:1] == "v" and v[1:].isdigit()
    ]
    return f"v{max(numbers, default=0) + 1}"


def promotion_decision(
    *,
    active: ScorerModel | None,
    new_gold: dict | None,
    active_gold: dict | None,
    validation: dict | None = None,
) -> tuple[bool, str]:
    """Whether a new version becomes active, and why (shown in the run log).

    Not worse on the gold set than the active scorer, both measured now on
    the same labels. Without gold labels nothing can show it is not worse, so
    the active scorer stays. A first scorer is promoted, unless it was
    trained without labels and does no better on its silver validation than
    flagging everything (what an untuned base amounts to): it learned nothing
    that can be measured, and "unscored" says more. A first scorer trained on
    expert labels is promoted only once it is measured on the gold set: a
    handful of labels validating it says nothing a verdict can rest on.
    """
    if active is None:
        if validation and validation.get("source") == "silver":
            # Its best F1: the threshold it keeps is set for precision.
            f1, floor = validation["best_f1"], validation["flag_all_f1"]
            if f1 <= floor:
                return False, (
                    f"silver validation F1 {f1:.3f} is no better than flagging "
                    f"everything ({floor:.3f})"
                )
            return True, (
                f"no active scorer; silver validation F1 {f1:.3f} beats flagging "
                f"everything ({floor:.3f})"
            )
        if new_gold is None:
            return False, (
                "no gold labels to measure it on; claims stay unscored until "
                "experts label some in the gold set"
            )
        return True, (
            f"no active scorer; gold F1 {new_gold['f1']:.3f} on {new_gold['n']} labels"
        )
    if new_gold is None:
        return False, "no gold labels to compare on; the active scorer stays"
    if active_gold is None:
        return True, f"the active scorer {active.version} could not be evaluated"
    if new_gold["f1"] >= active_gold["f1"]:
        return True, (
            f"gold F1 {new_gold['f1']:.3f} >= {active_gold['f1']:.3f} "
            f"of {active.version}"
        )
    return False, (
        f"gold F1 {new_gold['f1']:.3f} < {active_gold['f1']:.3f} of {active.version}"
    )


def version_register(
    *,
    run_id: int,
    project: Project,
    folder: Path,
    metadata: dict,
    expert_labels: int,
    new_gold: dict | None,
    active: ScorerModel | None,
    active_gold: dict | None,
    calibration: dict | None = None,
) -> ScorerModel:
    with transaction.atomic():
        run = TrainingRun.objects.select_for_update().get(pk=run_id)
        if run.status != RunStatus.RUNNING or run.cancel_requested:
            shutil.rmtree(folder, ignore_errors=True)
            raise TrainingStopped
        # Serialises version numbers and activation with scorer_activate.
        list(
            ScorerModel.objects.select_for_update()
            .filter(project=project)
            .values_list("pk", flat=True)
        )
        current = ScorerModel.objects.filter(project=project, is_active=True).first()
        if current is not None and (active is None or current.pk != active.pk):
            # An admin activated another version while this one trained: their
            # choice stands; this one waits to be promoted by hand.
            promote, reason = (
                False,
                (f"the active scorer changed to {current.version} during training"),
            )
        else:
            promote, reason = promotion_decision(
                active=active,
                new_gold=new_gold,
                active_gold=active_gold,
                validation=metadata["validation"],
            )
        version = _next_version(project)
        metadata.update(name=f"project{project.pk}-{version}", version=version)

        (folder / METADATA_FILE).write_text(
            json.dumps(metadata, indent=2), encoding="utf-8"
        )
        metrics = {
            "validation": metadata["validation"],
            "gold": new_gold,
            "active_gold": (
                {"version": active.version, **active_gold}
                if active is not None and active_gold is not None
                else None
            ),
            "stages": metadata["stages"],
            "device": metadata["device"],
            "train_seconds": metadata["train_seconds"],
            "promotion": {"promoted": promote, "reason": reason},
        }
        scorer = ScorerModel.objects.create(
            project=project,
            version=version,
            base_model=metadata["base_model"],
            path=str(folder),
            label_counts=metadata["label_counts"],
            threshold=min(1.0, max(0.0, float(metadata["threshold"]))),
            metrics=metrics,
            expert_labels=expert_labels,
            gold_f1=None if new_gold is None else new_gold["f1"],
            calibration=calibration or {},
            training_run=run,
        )
        run.status = RunStatus.SUCCEEDED
        run.finished_at = timezone.now()
        run.progress, run.stage = 1.0, "done"
        run.metrics = {
            "scorer": scorer.pk,
            "version": version,
            "promoted": promote,
            "reason": reason,
            "gold": new_gold,
            "validation": metadata["validation"],
        }
        run.log += log_line(
            f"registered {version}; "
            + ("promoted" if promote else "not promoted")
            + f": {reason}"
        )
        run.save(
            update_fields=[
                "status",
                "finished_at",
                "progress",
                "stage",
                "metrics",
                "log",
            ]
        )
        run_ended(TrainingRun, run.pk)
        if promote:
            # Rescoring every claim with it is queued on commit.
            scorer_activate(scorer=scorer)
    return scorer
