"""Reads and access checks. Views and the API go through these, so "which
projects may this user see" is decided in one place."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any

from django.db.models import (
    BooleanField,
    Case,
    Count,
    Exists,
    F,
    FloatField,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.expressions import RawSQL
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce, Greatest, Length, Substr
from django.db.models.lookups import Exact

from pipeline.checkers import checker_class
from pipeline.grader import THRESHOLD as GRADER_THRESHOLD

from . import gold as gold_set
from . import guidelines, pdfs
from .models import (
    GRADER_SCORER_PREFIX,
    Annotation,
    ConsistencyRun,
    Document,
    ExtractionRun,
    GradingRun,
    Lease,
    Membership,
    Prediction,
    PredictionScore,
    Project,
    Reason,
    Role,
    ScorerModel,
    TrainingRun,
    Verdict,
)

#: Roles that may change a project: its settings, imports, runs, scorers.
MANAGE = (Role.ADMIN,)
#: Roles that may label a project's predictions.
LABEL = (Role.ADMIN, Role.REVIEWER, Role.EXPERT)


def projects_for(user, *, roles: Iterable[str] | None = None) -> QuerySet[Project]:
    """The projects ``user`` is a member of (with one of ``roles``, if given).

    Superusers hold every role on every project; ``is_staff`` alone grants
    nothing here (only the Django admin, under its model permissions).
    """
    if not user.is_authenticated:
        return Project.objects.none()
    if user.is_superuser:
        return Project.objects.all()
    memberships = Membership.objects.filter(user=user)
    if roles is not None:
        memberships = memberships.filter(role__in=list(roles))
    return Project.objects.filter(pk__in=memberships.values("project_id"))


def project_get(*, user, pk: int) -> Project:
    """The project if ``user`` may see it; DoesNotExist otherwise (a 404, so
    outsiders cannot probe which projects exist)."""
    return projects_for(user).get(pk=pk)


def project_role(user, project: Project) -> str | None:
    """``user``'s role on ``project``: None for a non-member."""
    if user.is_superuser:
        return Role.ADMIN
    if not user.is_authenticated:
        return None
    return (
        Membership.objects.filter(user=user, project=project)
        .values_list("role", flat=True)
        .first()
    )


def project_roles(user) -> dict[int, str]:
    """``user``'s role on each project they can see, by project id."""
    if user.is_superuser:
        return dict.fromkeys(Project.objects.values_list("pk", flat=True), Role.ADMIN)
    return dict(Membership.objects.filter(user=user).values_list("project_id", "role"))


def machine_scores_shown(project: Project, role: str | None) -> bool:
    """Experts see scores and verdicts only where the project shows them (so
    they do not anchor the labels); its admins always do."""
    return project.show_machine_scores or role in MANAGE


def machine_scores_visible(user, project: Project) -> bool:
    """:func:`machine_scores_shown` for ``user``'s role on ``project``."""
    return machine_scores_shown(project, project_role(user, project))


def projects_with_scores_for(user) -> QuerySet[Project]:
    """The projects whose machine scores ``user`` may see."""
    return projects_for(user).filter(
        Q(show_machine_scores=True) | Q(pk__in=projects_for(user, roles=MANAGE))
    )


def documents_for(user) -> QuerySet[Document]:
    return Document.objects.filter(project__in=projects_for(user))


def predictions_for(user) -> QuerySet[Prediction]:
    return Prediction.objects.filter(project__in=projects_for(user))


def annotations_for(user) -> QuerySet[Annotation]:
    """A project's admins see every label on it; other members their own."""
    if not user.is_authenticated:
        return Annotation.objects.none()
    return Annotation.objects.filter(
        Q(prediction__project__in=projects_for(user, roles=MANAGE))
        | Q(prediction__project__in=projects_for(user), annotator=user)
    )


def extraction_runs_for(user) -> QuerySet[ExtractionRun]:
    return ExtractionRun.objects.filter(project__in=projects_for(user))


def scorer_models_for(user) -> QuerySet[ScorerModel]:
    return ScorerModel.objects.filter(project__in=projects_for(user, roles=MANAGE))


def training_runs_for(user) -> QuerySet[TrainingRun]:
    return TrainingRun.objects.filter(project__in=projects_for(user, roles=MANAGE))


def grading_runs_for(user) -> QuerySet[GradingRun]:
    return GradingRun.objects.filter(project__in=projects_for(user))


def consistency_runs_for(user) -> QuerySet[ConsistencyRun]:
    return ConsistencyRun.objects.filter(project__in=projects_for(user))


#: The words a page or the API filters verdicts by: each verdict's value,
#: and "unchecked" for the empty one.
VERDICT_FILTERS: dict[str, str] = {(v.value or "unchecked"): v.value for v in Verdict}


def predictions_filter(
    queryset: QuerySet[Prediction],
    *,
    project: int | None = None,
    document: str | None = None,
    verdict: str | None = None,
    type: str | None = None,
    model: str | None = None,
    min_score: float | None = None,
    max_score: float | None = None,
    labelled: bool | None = None,
) -> QuerySet[Prediction]:
    if project is not None:
        queryset = queryset.filter(project_id=project)
    if document:
        queryset = queryset.filter(document__external_id=document)
    if verdict is not None:
        queryset = queryset.filter(verdict=VERDICT_FILTERS[verdict])
    if type:
        queryset = queryset.filter(type=type)
    if model:
        queryset = queryset.filter(model=model)
    if min_score is not None:
        queryset = queryset.filter(score__gte=min_score)
    if max_score is not None:
        queryset = queryset.filter(score__lte=max_score)
    if labelled is not None:
        has_label = Exists(Annotation.objects.filter(prediction=OuterRef("pk")))
        queryset = queryset.filter(has_label if labelled else ~has_label)
    return queryset


def _finding_json(p: Prediction) -> dict[str, Any]:
    """A checked claim's finding, as every kind stores it: the claim as read,
    the evidence text and items, the scores, the verdict and its reason."""
    return {
        "hypothesis": p.hypothesis,
        "premise": p.premise,
        "evidence": p.evidence,
        "evidence_score": p.evidence_score,
        "score": p.score,
        "verdict": p.verdict,
        "reason": p.reason or None,
        "details": p.details,
    }


def export_rows(*, project: Project, kind: str) -> Iterator[dict[str, Any]]:
    """JSONL records in the pipeline's formats, streamed from the database:
    a checked claim of a kind whose evidence is an alignment in the
    ``check`` command's format, of any other kind as its finding."""
    from pipeline.jsonl import (
        checked_to_json,
        document_to_json,
        label_to_json,
        prediction_to_json,
    )
    from pipeline.types import Alignment, CheckedPrediction, Label

    from .records import document_record, prediction_record

    if kind == "documents":
        for d in Document.objects.filter(project=project).order_by("pk").iterator():
            yield document_to_json(document_record(d, external=True))
    elif kind == "predictions":
        rows = (
            Prediction.objects.filter(project=project)
            .select_related("document")
            .order_by("pk")
        )
        aligned = checker_class(project.kind).aligns
        for p in rows.iterator(chunk_size=2000):
            prediction = prediction_record(p, external=True)
            if not p.verdict:
                yield prediction_to_json(prediction)
                continue
            if not aligned:
                yield {**prediction_to_json(prediction), **_finding_json(p)}
                continue
            # The deciding alignment in the checked format's "align", which
            # the pipeline reads back.
            deciding = p.evidence[0] if p.evidence else {}
            yield checked_to_json(
                CheckedPrediction(
                    prediction=prediction,
                    hypothesis=p.hypothesis,
                    align=Alignment(
                        score=p.evidence_score or 0.0,
                        start=deciding.get("start"),
                        end=deciding.get("end"),
                        text=p.premise,
                    ),
                    score=p.score,
                    verdict=p.verdict,
                    reason=p.reason or None,
                )
            )
    elif kind == "labels":
        rows = (
            Annotation.objects.filter(
                prediction__project=project, label__in=Annotation.DECISIVE
            )
            .select_related("prediction", "annotator")
            .order_by("pk")
        )
        for a in rows.iterator(chunk_size=2000):
            extra = dict(a.extra)
            if a.annotator is not None:
                extra["annotator"] = a.annotator.get_username()
            if a.note:
                extra["note"] = a.note
            if a.corrected_type:
                extra["corrected_type"] = a.corrected_type
            if a.corrected_value is not None:
                extra["corrected_value"] = a.corrected_value
            if a.suggestion:
                extra["suggestion"] = a.suggestion
            if a.guideline_version is not None:
                extra["guideline_version"] = a.guideline_version
            yield label_to_json(
                Label(
                    prediction_id=a.prediction.external_id, label=a.label, extra=extra
                )
            )
    else:
        raise ValueError(f"unknown export kind {kind!r}")


# --- labeling queue ----------------------------------------------------------
#
# A prediction is *available* to an expert when they have not labelled it and
# it still needs decisive (safe/unsafe) labels that nobody else is holding:
#   - a single prediction needs one, and none may be leased to someone else;
#   - an overlap prediction needs ``project.overlap_labels``, counting other
#     experts' live leases as pending labels.
# "unsure" is a pass: the prediction stays available to the other experts.
# Expired leases are ignored everywhere, which is what returns them to the pool.

QueueOrder = Callable[..., QuerySet[Prediction]]
QUEUE_STRATEGIES: dict[str, QueueOrder] = {}

# Overlap predictions are a fixed pseudo-random share of ids: (id * A) mod P
# is a permutation of the residues for prime P, so any run of ids spreads
# evenly over [0, P). The SQL function annotator_labels_needed (migration
# 0006) computes the same; a test holds the two together.
_OVERLAP_MULTIPLIER = 7919
_OVERLAP_MODULUS = 10007
WINDOW_CHARS = 400
#: How far a window's cut may move to land on a line or word boundary.
WINDOW_SLACK = 80
MAX_SIBLINGS = 50


def queue_strategy(name: str) -> Callable[[QueueOrder], QueueOrder]:
    """Register an order for the labeling queue under ``name``.

    The function takes the available predictions and ``project``, ``annotator``
    keywords and returns them ordered, best first.
    """

    def register(order: QueueOrder) -> QueueOrder:
        QUEUE_STRATEGIES[name] = order
        return order

    return register


def active_threshold(project: Project) -> float:
    scorer = (
        ScorerModel.objects.filter(project=project, is_active=True)
        .values_list("threshold", flat=True)
        .first()
    )
    return project.nli_threshold if scorer is None else scorer


@queue_strategy("uncertainty")
def _order_uncertainty(queryset, *, project, annotator):
    # Score nearest the active threshold first; unscored predictions (not
    # checked yet, or alignment only) have no key and come last. The hand-out
    # keeps the key current (labeling.queue_keys_refresh); the order matches
    # the prediction_queue_uncertainty index.
    return queryset.order_by(F("uncertainty").asc(nulls_last=True), "pk")


@queue_strategy("random")
def _order_random(queryset, *, project, annotator):
    # One stored random order, stable across reloads; leases and SKIP LOCKED
    # split it between the experts. Matches the prediction_queue_random index.
    return queryset.order_by("random_key", "pk")


# How close to the project's evidence threshold (the alignment threshold) a
# deciding evidence score counts as borderline.
BORDERLINE_ALIGN = 0.1


@queue_strategy("disagreement")
def _order_disagreement(queryset, *, project, annotator):
    # Where the machine judges disagree, one of them is wrong. First the NLI
    # verdict against the LLM grader's, then (for a kind whose evidence is an
    # alignment) evidence so close to its threshold that a few characters
    # decide it; within each tier, and for the rest, the uncertainty order.
    # Unlike the other orders this one sorts the available rows (no index
    # serves it).
    threshold = active_threshold(project)
    grader = (
        PredictionScore.objects.filter(
            prediction=OuterRef("pk"), scorer__startswith=GRADER_SCORER_PREFIX
        )
        .order_by("-updated_at")
        .values("score")[:1]
    )
    tier = Case(
        When(
            Q(score__gte=threshold, graded__lt=GRADER_THRESHOLD)
            | Q(score__lt=threshold, graded__gte=GRADER_THRESHOLD),
            then=Value(2),
        ),
        When(
            Q(
                evidence_score__gte=project.align_threshold - BORDERLINE_ALIGN,
                evidence_score__lte=project.align_threshold + BORDERLINE_ALIGN,
            )
            if checker_class(project.kind).aligns
            else Q(pk__in=[]),
            then=Value(1),
        ),
        default=Value(0),
    )
    return (
        queryset.alias(graded=Subquery(grader))
        .alias(tier=tier)
        .order_by(F("tier").desc(), F("uncertainty").asc(nulls_last=True), "pk")
    )


@queue_strategy("stratified")
def _order_stratified(queryset, *, project, annotator):
    # Equal allocation over (entity type, source LLM) strata, random within
    # each: a prediction's key is its random key times the size of its
    # stratum, so the i-th of every stratum has a key near i and the strata
    # interleave, whatever their sizes. Rare types and weaker LLMs get as
    # many labels as the common ones.
    sizes = (
        queryset.order_by()
        .values_list("type", "model")
        .annotate(n=Count("pk"))
        .values_list("type", "model", "n")
    )
    size = Case(
        *[When(type=t, model=m, then=Value(float(n))) for t, m, n in sizes],
        default=Value(1.0),
        output_field=FloatField(),
    )
    return queryset.order_by((F("random_key") * size).asc(), "pk")


def _overlap_cutoff(project: Project) -> int:
    return round(project.overlap_share * _OVERLAP_MODULUS)


def is_overlap(project: Project, prediction_id: int) -> bool:
    bucket = (prediction_id * _OVERLAP_MULTIPLIER) % _OVERLAP_MODULUS
    return bucket < _overlap_cutoff(project)


# The availability rule, stated once in SQL for both statements that need it:
# scanning a project for candidates (queue_available) and re-checking rows
# already locked in the statement that leases them (labeling.labeling_next).
# Written out rather than composed in the ORM: compiling the ORM form took
# three times as long as running it, twice per hand-out. The label counts it
# reads are kept on the prediction by triggers (migration 0006).
_PREDICTION = Prediction._meta.db_table
_LEASE = Lease._meta.db_table
_ANNOTATION = Annotation._meta.db_table


def available_sql(
    table: str, *, project: Project, annotator, now: datetime | None
) -> tuple[str, list[Any]]:
    """A condition true where the prediction row ``table`` may go to ``annotator``.

    Open (fewer decisive labels than it needs: one, or the project's
    ``overlap_labels`` for its overlap share), not labelled by them, and, when
    ``now`` is given, not taken by enough other experts' live leases; with
    ``now=None`` leases are ignored (the work left, whoever holds it).
    Returns SQL with ``%s`` placeholders and their parameters.
    """
    sql = f"""
        {table}.queue_open
        AND NOT EXISTS (
            SELECT 1 FROM {_ANNOTATION} a
            WHERE a.prediction_id = {table}.id AND a.annotator_id = %s
        )"""
    params: list[Any] = [annotator.pk]
    if now is not None:
        sql += f"""
        AND {table}.decisive_labels + (
            SELECT count(*) FROM {_LEASE} l
            WHERE l.prediction_id = {table}.id AND l.expires_at > %s
                AND l.annotator_id <> %s
        ) < annotator_labels_needed({table}.id, %s, %s)"""
        params += [now, annotator.pk, project.overlap_share, project.overlap_labels]
    return sql, params


def queue_available(
    *, project: Project, annotator, now: datetime | None
) -> QuerySet[Prediction]:
    """Predictions ``annotator`` may be handed now (unordered); see
    available_sql. The condition names the prediction table itself, so use
    this queryset at the top level of a query, not as a subquery."""
    sql, params = available_sql(
        _PREDICTION, project=project, annotator=annotator, now=now
    )
    return Prediction.objects.filter(project=project).filter(
        RawSQL(sql, params, output_field=BooleanField())
    )


def queue_candidates(
    *,
    project: Project,
    annotator,
    now: datetime,
    exclude: Iterable[int] = (),
    gold: bool = False,
) -> QuerySet[Prediction]:
    """Available predictions in the project's order, row-locked as they are read.

    ``gold`` picks the gold documents' predictions, in random order (an
    unbiased test set), or the others, in the project's strategy order.
    SKIP LOCKED lets concurrent hand-outs take different rows instead of
    queueing behind each other; NO KEY UPDATE does not block annotation
    inserts (their foreign key takes KEY SHARE on the prediction).
    """
    queryset = gold_set.restrict(
        queue_available(project=project, annotator=annotator, now=now),
        project,
        gold=gold,
    )
    exclude = list(exclude)
    if exclude:
        queryset = queryset.exclude(pk__in=exclude)
    if gold:
        order = _order_random
    else:
        order = QUEUE_STRATEGIES.get(project.queue_strategy, _order_uncertainty)
    return order(queryset, project=project, annotator=annotator).select_for_update(
        skip_locked=True, no_key=True, of=("self",)
    )


def queue_held(
    *, project: Project, annotator, now: datetime, exclude: Iterable[int] = ()
) -> QuerySet[Lease]:
    """The expert's live leases on predictions they have not labelled yet."""
    return (
        Lease.objects.filter(
            annotator=annotator, prediction__project=project, expires_at__gt=now
        )
        .exclude(prediction__in=list(exclude))
        .exclude(
            Exists(
                Annotation.objects.filter(
                    prediction=OuterRef("prediction"), annotator=annotator
                )
            )
        )
        .order_by("created_at", "prediction_id")
    )


def queue_progress(*, project: Project, annotator, now: datetime) -> dict[str, Any]:
    """Done, remaining and pace for one expert on one project."""
    mine = Annotation.objects.filter(
        annotator=annotator, prediction__project=project, source=Annotation.Source.UI
    )
    hour_ago = now - timedelta(hours=1)
    done = mine.aggregate(
        done=Count("pk"),
        last_hour=Count("pk", filter=Q(updated_at__gte=hour_ago)),
    )
    # Pace over the recent labels: 3600 / mean seconds per label, so a
    # coffee break does not count against it the way a wall-clock rate would.
    recent = list(
        mine.filter(seconds_spent__isnull=False)
        .order_by("-updated_at")
        .values_list("seconds_spent", flat=True)[:200]
    )
    seconds = sum(recent)
    remaining = queue_available(project=project, annotator=annotator, now=None)
    return {
        "done": done["done"],
        "last_hour": done["last_hour"],
        "per_hour": round(3600 * len(recent) / seconds, 1) if seconds else None,
        "remaining": remaining.count(),
    }


def project_schema_or_none(project: Project):
    """The project's parsed entity schema; None when it has none or it does
    not parse (pages then show default names; the check reports it)."""
    from pipeline.errors import SchemaError

    try:
        return project.schema()
    except SchemaError:
        return None


_ITEM_FIELDS = (
    "pk",
    "external_id",
    "model",
    "type",
    "value",
    "hypothesis",
    "context",
    "premise",
    "evidence",
    "evidence_score",
    "details",
    "document_id",
)


def _anchor(end: str) -> Case:
    """Where the deciding evidence starts or ends (``end``) in the claim's own
    document; null when it is elsewhere (another source) or absent. The
    labeling window and the order of a document's claims follow it."""
    return Case(
        When(
            Exact(KT("evidence__0__source"), F("document__external_id")),
            then=Cast(KT(f"evidence__0__{end}"), IntegerField()),
        ),
        default=None,
        output_field=IntegerField(),
    )


_MACHINE_FIELDS = ("score", "scored_by")


def without_keys(value: Any, keys: frozenset[str]) -> Any:
    """``value`` (JSON) with every object key in ``keys`` left out, at any
    depth: a checker's details less the scorer's judgements."""
    if isinstance(value, dict):
        return {k: without_keys(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [without_keys(v, keys) for v in value]
    return value


#: How near the active threshold a score makes a verdict a close call; the
#: stored ``uncertainty`` is that distance.
CLOSE_CALL = 0.1

_WHITESPACE = re.compile(r"\s+")


def _cut_start(text: str, at: int, *, limit: int, starts_document: bool) -> int:
    """Where a window of ``text`` meant to start at ``at`` starts instead: the
    nearest line start within WINDOW_SLACK characters, else the nearest word
    start, never after ``limit`` (the evidence); ``at`` when there is none (a
    run of that many characters without a space)."""
    if at == 0 and starts_document:
        return 0
    lo, hi = max(at - WINDOW_SLACK, 0), min(at + WINDOW_SLACK, limit)
    lines: list[int] = []
    words: list[int] = []
    if lo == 0 and starts_document:
        lines.append(0)
    for run in _WHITESPACE.finditer(text, lo, hi + 1):
        i = run.end()
        if i > hi or i >= len(text) or text[i].isspace():
            continue  # cut short by the search's end: not a word start
        (lines if "\n" in run.group() else words).append(i)
    found = lines or words
    return min(found, key=lambda i: abs(i - at)) if found else at


def _cut_end(text: str, at: int, *, limit: int, ends_document: bool) -> int:
    """``_cut_start`` from the other end: a line or word end, never before
    ``limit``."""
    n = len(text)
    return n - _cut_start(
        text[::-1], n - at, limit=n - limit, starts_document=ends_document
    )


def _excerpt(
    raw: str,
    raw_start: int,
    *,
    anchor_start: int | None,
    anchor_end: int | None,
    length: int,
    least: int = 2 * WINDOW_CHARS,
) -> tuple[int, str]:
    """The window around the deciding evidence, cut at line or word
    boundaries, and where it starts in the document. ``raw`` is the document
    from ``raw_start``, WINDOW_SLACK characters wider than the window on each
    side (as labeling_items reads it); the evidence itself is never cut.
    ``least``: how far the window reaches at least, for evidence near the
    start."""
    start = max((anchor_start or 0) - WINDOW_CHARS, 0)
    end = min(max((anchor_end or 0) + WINDOW_CHARS, least), length)
    if not raw_start <= start <= end <= raw_start + len(raw):
        # Evidence beyond the text (the check clears it when either changes).
        return start, raw[start - raw_start : end - raw_start]
    keep_from = min(max(anchor_start or start, start), end)
    keep_to = min(max(anchor_end or start, keep_from), end)
    i = _cut_start(
        raw,
        start - raw_start,
        limit=keep_from - raw_start,
        starts_document=raw_start == 0,
    )
    j = _cut_end(
        raw,
        end - raw_start,
        limit=keep_to - raw_start,
        ends_document=raw_start + len(raw) >= length,
    )
    return raw_start + i, raw[i:j]


def _page_window(p: dict[str, Any], table) -> tuple[int, str, list[int]] | None:
    """For a document with pages (a PDF's), the window around the deciding
    evidence kept to the page(s) the evidence is on, and those pages: the
    page's text around it, never a window running into the next page. None
    without evidence in the document, or for evidence between two pages."""
    if p["anchor_start"] is None or p["anchor_end"] is None:
        return None
    bounds = pdfs.page_bounds(table, p["anchor_start"], p["anchor_end"])
    if bounds is None:
        return None
    pages, low, high = bounds
    # The excerpt of the page(s) alone, as if they were the whole document:
    # its cuts then land on their bounds, or inside them on a line or word.
    raw_start, raw = p["raw_start"], p["raw_text"]
    from_ = max(low, raw_start)
    to = max(min(high, raw_start + len(raw)), from_)
    start, text = _excerpt(
        raw[from_ - raw_start : to - raw_start],
        from_ - low,
        anchor_start=p["anchor_start"] - low,
        anchor_end=p["anchor_end"] - low,
        length=high - low,
        least=0,
    )
    return low + start, text, pages


def _why(p: dict[str, Any], *, gold: bool, reasons: dict[str, str]) -> dict[str, str]:
    """Why the claim is in front of the expert, in words: shown whether or
    not the project shows machine scores, so it never names a score. A
    flagged claim's reason is in its checker's own words (``reasons``)."""
    if gold:
        # The gold set measures the scorer: its items are drawn at random and
        # say nothing of what the machine thought, so as not to anchor the
        # labels it is measured against.
        return {
            "code": "gold",
            "text": "Gold check: drawn at random for the test set "
            "that measures the scorer",
        }
    verdict, reason = p["verdict"], p["reason"]
    if verdict == Verdict.UNCHECKED:
        return {"code": "unchecked", "text": "Not checked yet"}
    if verdict == Verdict.UNSCORED:
        return {"code": "unscored", "text": "No scorer has judged this yet"}
    if verdict == Verdict.UNSAFE:
        said = reasons.get(reason, "its evidence may not support it")
        return {
            "code": reason or "flagged",
            "text": f"Flagged: {said[:1].lower()}{said[1:]}",
        }
    # The stored distance to the threshold, kept current by every hand-out
    # (labeling.queue_keys_refresh): an item opened outside the queue may
    # read one a threshold change behind.
    if p["uncertainty"] is not None and p["uncertainty"] < CLOSE_CALL:
        return {
            "code": "close_call",
            "text": "A close call: its evidence may not support it",
        }
    return {"code": "spot_check", "text": "Spot check of an item judged safe"}


def labeling_items(
    *, project: Project, annotator, ids: list[int]
) -> list[dict[str, Any]]:
    """What the labeling page needs to judge each prediction, in ``ids`` order.

    Documents come as a window around the deciding evidence (cut in SQL, so a
    long document is not shipped 20 times, then moved to line or word
    boundaries); the page fetches the whole text only when the expert expands
    it. Machine scores are left out unless the project shows them; why the
    item is there (``why``) is said in words to every expert. A batch costs
    the same few queries whatever its size, and rows come as dicts of the
    columns used: building model instances and decoding unused JSON was most
    of the time of a hand-out.
    """
    from pipeline.checkers.extraction.hypothesis import (
        render_hypothesis,
        render_value,
        type_display_name,
    )

    if not ids:
        return []
    schema = project_schema_or_none(project)
    # The window WINDOW_SLACK characters wider on each side, for _excerpt to
    # cut at a line or word boundary.
    anchor_start, anchor_end = _anchor("start"), _anchor("end")
    start = Greatest(
        Coalesce(anchor_start, Value(0)) - (WINDOW_CHARS + WINDOW_SLACK), Value(0)
    )
    end = (
        Greatest(Coalesce(anchor_end, Value(0)) + WINDOW_CHARS, Value(2 * WINDOW_CHARS))
        + WINDOW_SLACK
    )
    machine = _MACHINE_FIELDS if project.show_machine_scores else ()
    reasons = checker_class(project.kind).reasons
    rows = (
        Prediction.objects.filter(project=project, pk__in=ids)
        .order_by()
        .values(
            *_ITEM_FIELDS,
            *machine,
            "verdict",
            "reason",
            "uncertainty",
            anchor_start=anchor_start,
            anchor_end=anchor_end,
            raw_start=start,
            raw_text=Substr("document__text", start + 1, end - start),
            document_length=Length("document__text"),
            document_external_id=F("document__external_id"),
            # A PDF's page table (null for other documents), with each row
            # rather than in a query of its own: a long PDF's is a few
            # kilobytes.
            document_pages=F("document__metadata__pages"),
        )
    )
    by_id = {p["pk"]: p for p in rows}
    document_ids = {p["document_id"] for p in by_id.values()}
    scores: dict[int, list[dict[str, Any]]] = {}
    if machine:
        for s in PredictionScore.objects.filter(prediction_id__in=by_id).values(
            "prediction_id", "scorer", "scorer_version", "score", "reasoning"
        ):
            scores.setdefault(s["prediction_id"], []).append(
                {
                    "scorer": s["scorer"],
                    "version": s["scorer_version"],
                    "score": s["score"],
                    # Why the LLM grader decided so: the expert weighs it.
                    "reasoning": s["reasoning"],
                }
            )
    siblings: dict[int, list[dict[str, Any]]] = {}
    for sibling in (
        Prediction.objects.filter(document_id__in=document_ids)
        .alias(anchor=_anchor("start"))
        .order_by("document_id", "anchor", "pk")
        # The value only to render a hypothesis the check has not stored yet.
        .values(
            "pk",
            "document_id",
            "type",
            "hypothesis",
            unrendered_value=Case(When(hypothesis="", then="value")),
        )
    ):
        siblings.setdefault(sibling["document_id"], []).append(sibling)
    my_labels = {
        a["prediction_id"]: a
        for a in Annotation.objects.filter(
            annotator=annotator, prediction__document_id__in=document_ids
        ).values(
            "prediction_id",
            "label",
            "client_id",
            "note",
            "corrected_type",
            "corrected_value",
            "suggestion",
        )
    }

    def hypothesis(p: dict[str, Any], value: Any) -> str:
        return p["hypothesis"] or render_hypothesis(p["type"], value, schema=schema)

    hidden = checker_class(project.kind).score_fields

    def label_of(prediction_id: int) -> dict[str, Any] | None:
        a = my_labels.get(prediction_id)
        if a is None:
            return None
        return {
            "label": a["label"],
            "client_id": str(a["client_id"]) if a["client_id"] else None,
            "note": a["note"],
            "corrected_type": a["corrected_type"],
            "corrected_value": a["corrected_value"],
            "suggestion": a["suggestion"],
        }

    items = []
    for pk in ids:
        p = by_id.get(pk)
        if p is None:
            continue
        spec = schema.get(p["type"]) if schema else None
        table = pdfs.page_table({"pages": p["document_pages"]}, p["document_length"])
        paged = _page_window(p, table) if table else None
        if paged is not None:
            window_start, window_text, window_pages = paged
        else:
            window_start, window_text = _excerpt(
                p["raw_text"],
                p["raw_start"],
                anchor_start=p["anchor_start"],
                anchor_end=p["anchor_end"],
                length=p["document_length"],
            )
            window_pages = (
                pdfs.pages_of(table, window_start, window_start + len(window_text))
                if table
                else []
            )
        # False: the LLM's context matches no passage of the document, and
        # its aligned span means nothing; None: not checked yet.
        context_found = p["reason"] != Reason.NOT_IN_DOCUMENT if p["verdict"] else None
        type_display = type_display_name(p["type"], schema)
        item = {
            "id": pk,
            "external_id": p["external_id"],
            "model": p["model"],
            "type": p["type"],
            "type_display": type_display,
            "guideline_keys": guidelines.section_keys(p["type"], type_display),
            "value": p["value"],
            "value_display": render_value(
                p["value"], render=spec.render if spec else None
            ),
            "hypothesis": hypothesis(p, p["value"]),
            "context": p["context"],
            "premise": p["premise"],
            # Each span in the document with its page; none for a context not
            # found, whose aligned span is only the least bad match.
            "evidence": pdfs.evidence_paged(
                p["evidence"],
                document=p["document_external_id"],
                table=table if context_found is not False else None,
            ),
            "evidence_score": p["evidence_score"],
            "details": p["details"] if machine else without_keys(p["details"], hidden),
            "document": {
                "id": p["document_id"],
                "external_id": p["document_external_id"],
                "length": p["document_length"],
                "window_start": window_start,
                "window_text": window_text,
                # A PDF's: the pages the window shows, and how many it has.
                "pages": window_pages,
                "page_label": pdfs.page_label(window_pages),
                "page_count": len(table) if table else None,
            },
            "siblings": [
                {
                    "id": s["pk"],
                    "hypothesis": hypothesis(s, s["unrendered_value"]),
                    "my_label": my_labels.get(s["pk"], {}).get("label"),
                }
                for s in siblings.get(p["document_id"], [])[:MAX_SIBLINGS]
            ],
            "overlap": is_overlap(project, pk),
            "my_label": label_of(pk),
            "why": _why(
                p,
                gold=gold_set.is_gold_document(project, p["document_id"]),
                reasons=reasons,
            ),
            "context_found": context_found,
        }
        if machine:
            item["machine"] = {
                "score": p["score"],
                "scored_by": p["scored_by"],
                "verdict": p["verdict"],
                "reason": p["reason"],
                "scores": scores.get(pk, []),
            }
        items.append(item)
    return items


def labels_recent(*, project: Project, annotator) -> QuerySet[Annotation]:
    """The expert's own labels on the project, newest change first."""
    return (
        Annotation.objects.filter(
            annotator=annotator,
            prediction__project=project,
            source=Annotation.Source.UI,
        )
        .select_related("prediction")
        .order_by("-updated_at", "-pk")
    )
