"""Checking: align, score and judge a project's claims with its checker and
scorer (the worker runs it), and the scorer activation that rescores them.

The pipeline's scorers are imported inside the functions that use them: the
web process never loads torch.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

import pipeline
from annotator.claims.records import claim_fields, claim_record, document_record
from annotator.core import allowlists
from annotator.core.dispatch import send_after_commit
from annotator.core.errors import ApplicationError, ConfigurationError
from annotator.kinds import kind_hook
from annotator.labeling import queue
from annotator.models import (
    UNSCORED_UNCERTAINTY,
    Claim,
    ClaimScore,
    Document,
    Project,
    Reason,
    ScorerModel,
    Verdict,
)
from pipeline.checkers import checker_class
from pipeline.score import NLIScorer, model_folder_problem, resolve_model

logger = logging.getLogger(__name__)


ProgressCallback = Callable[[int, int], None]


CHECK_FIELDS: dict[str, Any] = dict(
    hypothesis="",
    premise="",
    evidence=[],
    evidence_score=None,
    score=None,
    uncertainty=None,
    scored_by="",
    verdict=Verdict.UNCHECKED,
    reason=Reason.NONE,
    details={},
    checked_at=None,
    pipeline_version="",
)


def claims_reset(queryset) -> int:
    """Forget verdicts that no longer hold (their document or claim changed)."""
    return queryset.update(**CHECK_FIELDS, updated_at=timezone.now())


def claims_recheck(queryset) -> int:
    """Ask for a new check but keep the verdicts until it replaces them (a new
    scorer, a forced rerun): ``checked_at`` empty is what the check looks for."""
    return queryset.update(checked_at=None, updated_at=timezone.now())


@dataclass
class CheckSummary:
    checked: int = 0
    safe: int = 0
    unsafe: int = 0
    unscored: int = 0
    errors: list[str] = field(default_factory=list)
    scorer: str = ""


_scorer_lock = threading.Lock()


_scorer_cache: dict[str, Any] = {}


def _scorer_load(path: str, *, threshold: float | None):
    """One scorer per worker process: loading a cross-encoder takes seconds."""
    key = f"{path}@{threshold}"
    with _scorer_lock:
        if key not in _scorer_cache:
            scorer = NLIScorer(path, threshold=threshold, quantize=settings.SCORER_INT8)
            _scorer_cache.clear()
            _scorer_cache[key] = scorer
        return _scorer_cache[key]


def project_scorer(project: Project) -> tuple[Any, str]:
    """The active scorer of the project, else DEFAULT_SCORER, else none, with
    its version ("default", "")."""
    active = ScorerModel.objects.filter(project=project, is_active=True).first()
    if active is not None:
        return _scorer_load(active.path, threshold=active.threshold), active.version
    if settings.DEFAULT_SCORER:
        scorer = _scorer_load(settings.DEFAULT_SCORER, threshold=project.nli_threshold)
        return scorer, "default"
    return None, ""


def project_checker(project: Project, documents: dict[str, Any]):
    """The checker of the project's kind over ``documents`` (pipeline
    records by id), built with the options its constructor names among those
    the app offers (int8, and what its kind's hook makes of the project and
    the deployment: an extraction project's schema, a case-law store): an
    option is made only for a checker that takes it, so a check builds no
    case law it ignores.

    Raises:
        ConfigurationError: a stored option or the case-law settings do not
            parse.
    """
    offered: dict[str, Callable[[Project], Any]] = {
        "int8": lambda _project: settings.SCORER_INT8,
        **kind_hook(project.kind).checker_options,
    }
    checker = checker_class(project.kind)
    taken = inspect.signature(checker).parameters
    return checker(
        documents,
        **{name: make(project) for name, make in offered.items() if name in taken},
    )


def finds_claims(project: Project) -> bool:
    """Whether the project's checker reads its claims from the documents."""
    return hasattr(checker_class(project.kind), "find_claims")


def claims_find(project: Project, *, document_ids=None) -> int:
    """Claims of the project's documents that have none yet (or of
    ``document_ids``), for a checker that reads its claims from the
    documents (the citations of a brief, the blocks of a response). Returns
    how many were added; safe to run twice (a claim found again is left as
    it is)."""
    if not finds_claims(project):
        return 0
    added, last = 0, 0
    pending = Document.objects.filter(project=project).order_by("pk")
    if document_ids is None:
        pending = pending.filter(claims=None)
    else:
        pending = pending.filter(pk__in=document_ids)
    while batch := list(pending.filter(pk__gt=last)[: settings.CHECK_BATCH_SIZE]):
        last = batch[-1].pk
        # Named by their external ids, so that the ids the checker derives
        # from them ("{brief}:{start}", "{answer}#b{i}") are the claims'.
        records = {d.external_id: document_record(d, external=True) for d in batch}
        by_external_id = {d.external_id: d for d in batch}
        checker = project_checker(project, records)
        rows = [
            Claim(
                project=project,
                document=by_external_id[claim.document_id],
                external_id=claim.id,
                **claim_fields(claim, project.kind),
            )
            for claim in checker.find_claims(records)
        ]
        # A concurrent run may have found the same claims: theirs stand.
        before = Claim.objects.filter(document__in=batch).count()
        Claim.objects.bulk_create(rows, ignore_conflicts=True)
        added += Claim.objects.filter(document__in=batch).count() - before
    return added


def claims_refind(project: Project, document_ids) -> None:
    """After documents' text changed: their found claims point into the old
    text, so the unlabelled ones are dropped and the claims found again;
    labelled ones stay with their labels (a check reports them)."""
    if not finds_claims(project):
        return
    Claim.objects.filter(document_id__in=document_ids, labels=None).delete()
    claims_find(project, document_ids=document_ids)


def claims_check(
    *,
    project_id: int,
    force: bool = False,
    progress: ProgressCallback | None = None,
) -> CheckSummary:
    """Align, score and judge the project's unchecked claims.

    Only claims not yet checked (``checked_at`` empty) are computed (all
    of them when ``force``, keeping their verdicts until replaced), so running
    it twice does nothing the second time. Each batch
    is claimed with ``FOR UPDATE SKIP LOCKED`` and committed on its own: two
    workers on the same project split the work instead of repeating it.
    """

    project = Project.objects.get(pk=project_id)
    try:  # a broken option stops the run before any work
        kind_hook(project.kind).options_cleaned(project.options, {})
    except ValueError as e:
        raise ConfigurationError(f"project {project.name!r}: {e}") from e
    claims_find(project)
    scorer, scorer_version = project_scorer(project)
    summary = CheckSummary(scorer=getattr(scorer, "name", "") if scorer else "")
    version = getattr(pipeline, "__version__", "")
    if force:
        claims_recheck(Claim.objects.filter(project=project))
    total = Claim.objects.filter(project=project, checked_at=None).count()
    while True:
        with transaction.atomic():
            batch = list(
                Claim.objects.select_for_update(skip_locked=True, of=("self",))
                .filter(project=project, checked_at=None)
                .select_related("document")
                .order_by("pk")[: settings.CHECK_BATCH_SIZE]
            )
            if not batch:
                break
            by_id = {str(p.pk): p for p in batch}
            documents = {str(p.document_id): document_record(p.document) for p in batch}
            checker = project_checker(project, documents)
            report = checker.check(
                [claim_record(p, project.kind) for p in batch], scorer=scorer
            )
            now = timezone.now()
            # Read after scoring (which takes seconds), so a threshold change
            # that a hand-out has already applied is not undone with a stale
            # one; a later change recomputes these rows (queue_keys_refresh).
            threshold = queue.active_threshold(project)
            rows, scores = [], []
            for f in report.findings:
                row = by_id[f.claim_id]
                row.hypothesis, row.premise = f.hypothesis, f.premise
                row.evidence = [
                    {**asdict(e), "source": _source_name(e.source, row)}
                    for e in f.evidence
                ]
                row.evidence_score = f.evidence[0].score if f.evidence else None
                row.score = f.score
                row.scored_by = summary.scorer if f.score is not None else ""
                row.verdict, row.reason = f.verdict, f.reason or Reason.NONE
                row.details = f.extra
                if f.verdict == Verdict.SAFE and f.score is None and not f.decided:
                    row.verdict = Verdict.UNSCORED  # no scorer said so
                row.uncertainty = (
                    abs(f.score - threshold)
                    if f.score is not None
                    else UNSCORED_UNCERTAINTY
                    if row.verdict == Verdict.UNSCORED
                    else None
                )
                row.checked_at, row.pipeline_version = now, version
                row.updated_at = now
                rows.append(row)
                if f.score is not None:
                    scores.append(
                        ClaimScore(
                            claim=row,
                            scorer=summary.scorer,
                            scorer_version=scorer_version,
                            score=f.score,
                        )
                    )
                summary.safe += row.verdict == Verdict.SAFE
                summary.unsafe += row.verdict == Verdict.UNSAFE
                summary.unscored += row.verdict == Verdict.UNSCORED
            Claim.objects.bulk_update(
                rows, [*CHECK_FIELDS, "updated_at"], batch_size=500
            )
            ClaimScore.objects.bulk_create(
                scores,
                update_conflicts=True,
                unique_fields=["claim", "scorer", "scorer_version"],
                update_fields=["score", "updated_at"],
            )
            summary.checked += len(rows)
            summary.errors.extend(str(e) for e in report.errors)
            if len(rows) < len(batch):
                # A claim the checker could not read (a labelled citation whose
                # brief has changed): checked with its error, so the run goes
                # on instead of claiming the same rows forever.
                unread = [p for p in batch if p not in rows]
                problems = {str(e).split(":", 1)[0]: str(e) for e in report.errors}
                for p in unread:
                    p.checked_at, p.updated_at = now, now
                    p.details = {"error": problems.get(str(p.pk), "not checked")}
                Claim.objects.bulk_update(
                    unread, ["checked_at", "details", "updated_at"]
                )
                logger.error("check could not read %d claims", len(unread))
        if progress:
            progress(summary.checked, total)
    return summary


def _source_name(source: str, row: Claim) -> str:
    """Evidence found in the claim's own document is named by the document's
    external id (the check names documents by database id)."""
    return row.document.external_id if source == str(row.document_id) else source


def claims_check_queue(*, project: Project, force: bool = False) -> int:
    """Have the workers check the project's unchecked claims (every one
    when ``force``, keeping verdicts until replaced). The rows record what is
    left before the message is sent, so a lost message is found by the sweep.
    Returns how many claims wait for the check."""
    with transaction.atomic():
        if force:
            claims_recheck(Claim.objects.filter(project=project))
        check_enqueue(project.pk)
    return Claim.objects.filter(project=project, checked_at=None).count()


def check_enqueue(project_id: int) -> None:
    """One check message, or up to CHECK_PARALLEL where more than one batch
    waits: each worker that takes one claims batches of its own, so a large
    project's check spreads over that many workers."""
    size, most = settings.CHECK_BATCH_SIZE, max(1, settings.CHECK_PARALLEL)
    # Counted no further than it matters: a project may hold a million.
    waiting = Claim.objects.filter(project_id=project_id, checked_at=None)
    unchecked = waiting[: (most - 1) * size + 1].count()
    for _ in range(max(1, min(most, -(-unchecked // size)))):
        send_after_commit("annotator.tasks.check_claims", project_id)


def scorer_problem(scorer: ScorerModel) -> str | None:
    """Why workers could not load ``scorer``: outside the allow-list, or not a
    model folder. A hub name the deployment lists passes (it loads where the
    hub is reachable)."""

    problem = allowlists.scorer_source_problem(
        scorer.path, project_id=scorer.project_id
    )
    if problem:
        return problem
    local = Path(resolve_model(scorer.path))
    if local.is_absolute() or local.exists():
        return model_folder_problem(local)
    return None


def scorer_threshold_set(*, scorer: ScorerModel, threshold: float) -> ScorerModel:
    """Change a scorer's decision threshold. The verdicts of the active one
    are judged again by the check (kept until each row is replaced), so none
    stays decided by the old threshold. A threshold set by hand is no
    operating point: the one recorded is cleared (``calibration`` records it
    after calling this)."""
    with transaction.atomic():
        changed = scorer.threshold != threshold
        scorer.threshold = threshold
        if changed:
            scorer.operating_point = {}
        scorer.save(update_fields=["threshold", "operating_point"])
        if changed and scorer.is_active:
            claims_recheck(Claim.objects.filter(project=scorer.project_id))
            check_enqueue(scorer.project_id)
    return scorer


def scorer_activate(*, scorer: ScorerModel, recheck: bool = True) -> ScorerModel:
    """Make ``scorer`` the project's active one; verdicts are recomputed with it.

    A scorer that fails validation changes nothing. The old verdicts stay
    (and keep the labeling queue ordered) until the check rescores each row.

    Raises:
        ApplicationError: the scorer's folder is missing or broken.
    """
    problem = scorer_problem(scorer)
    if problem:
        raise ApplicationError(
            f"scorer {scorer.version} cannot be activated: {problem}; the "
            "active scorer is unchanged"
        )
    with transaction.atomic():
        # Serialises concurrent activations; the partial unique constraint
        # would otherwise turn the loser into an IntegrityError.
        list(
            ScorerModel.objects.select_for_update()
            .filter(project=scorer.project_id)
            .values_list("pk", flat=True)
        )
        ScorerModel.objects.filter(project=scorer.project_id, is_active=True).exclude(
            pk=scorer.pk
        ).update(is_active=False)
        scorer.is_active = True
        scorer.save(update_fields=["is_active"])
        if recheck:
            claims_recheck(Claim.objects.filter(project=scorer.project_id))
            check_enqueue(scorer.project_id)
    return scorer
