"""The labeling queue: which claims are available to an expert, in which
order, and how far the project has come."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import (
    BooleanField,
    Case,
    Count,
    F,
    FloatField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.expressions import RawSQL

from annotator.claims.records import claim_group
from annotator.labeling import gold as gold_set
from annotator.models import (
    GRADER_SCORER_PREFIX,
    Claim,
    ClaimScore,
    Label,
    Lease,
    Project,
    QueueStrategy,
    ScorerModel,
)
from pipeline.grader import THRESHOLD as GRADER_THRESHOLD

# --- labeling queue ----------------------------------------------------------
#
# A claim is *available* to an expert when they have not labelled it and
# it still needs decisive (safe/unsafe) labels that nobody else is holding:
#   - a single claim needs one, and none may be leased to someone else;
#   - an overlap claim needs ``project.overlap_labels``, counting other
#     experts' live leases as pending labels.
# "unsure" is a pass: the claim stays available to the other experts.
# Expired leases are ignored everywhere, which is what returns them to the pool.

QueueOrder = Callable[..., QuerySet[Claim]]
QUEUE_STRATEGIES: dict[str, QueueOrder] = {}

# Overlap claims are a fixed pseudo-random share of ids: (id * A) mod P
# is a permutation of the residues for prime P, so any run of ids spreads
# evenly over [0, P). The SQL function annotator_labels_needed (the initial
# migration's) computes the same; a test holds the two together.
_OVERLAP_MULTIPLIER = 7919
_OVERLAP_MODULUS = 10007


def queue_strategy(name: str) -> Callable[[QueueOrder], QueueOrder]:
    """Register an order for the labeling queue under ``name``.

    The function takes the available claims and ``project``, ``annotator``
    keywords and returns them ordered, best first.
    """

    if name not in QueueStrategy.values:
        raise ValueError(f"{name!r} is not a QueueStrategy (annotator.models)")

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
    # Score nearest the active threshold first; unscored claims (not
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
    kept_at = project.evidence_threshold()
    grader = (
        ClaimScore.objects.filter(
            claim=OuterRef("pk"), scorer__startswith=GRADER_SCORER_PREFIX
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
                evidence_score__gte=kept_at - BORDERLINE_ALIGN,
                evidence_score__lte=kept_at + BORDERLINE_ALIGN,
            )
            if kept_at is not None
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
    # Equal allocation over (group, source LLM) strata (an extracted field's
    # group is its entity type), random within each: a claim's key is its
    # random key times the size of its stratum, so the i-th of every stratum
    # has a key near i and the strata interleave, whatever their sizes. Rare
    # types and weaker LLMs get as many labels as the common ones.
    queryset = queryset.annotate(group=claim_group(project.kind))
    sizes = (
        queryset.order_by()
        .values_list("group", "model")
        .annotate(n=Count("pk"))
        .values_list("group", "model", "n")
    )
    size = Case(
        *[When(group=g, model=m, then=Value(float(n))) for g, m, n in sizes],
        default=Value(1.0),
        output_field=FloatField(),
    )
    return queryset.order_by((F("random_key") * size).asc(), "pk")


def _overlap_cutoff(project: Project) -> int:
    return round(project.overlap_share * _OVERLAP_MODULUS)


def is_overlap(project: Project, claim_id: int) -> bool:
    bucket = (claim_id * _OVERLAP_MULTIPLIER) % _OVERLAP_MODULUS
    return bucket < _overlap_cutoff(project)


# The availability rule, stated once in SQL for both statements that need it:
# scanning a project for candidates (queue_available) and re-checking rows
# already locked in the statement that leases them (labeling.labeling_next).
# Written out rather than composed in the ORM: compiling the ORM form took
# three times as long as running it, twice per hand-out. The label counts it
# reads are kept on the claim by triggers (the initial migration's SQL).
_CLAIM = Claim._meta.db_table
_LEASE = Lease._meta.db_table
_ANNOTATION = Label._meta.db_table
#: The claim columns of labels and leases, named "prediction_id" since before
#: the rename (raw SQL names columns, not fields).
CLAIM_COLUMN = Label._meta.get_field("claim").column


def available_sql(
    table: str,
    *,
    project: Project,
    annotator,
    now: datetime | None,
    few_rows: bool = False,
) -> tuple[str, list[Any]]:
    """A condition true where the claim row ``table`` may go to ``annotator``.

    Checked (an expert reads a claim with its evidence, never before its
    check), open (fewer decisive labels than it needs: one, or the project's
    ``overlap_labels`` for its overlap share), not labelled by them, and, when
    ``now`` is given, not taken by enough other experts' live leases; with
    ``now=None`` leases are ignored (the work left, whoever holds it).
    ``few_rows`` is for a statement that reads a few rows (the lease's
    re-check, a draw from a random key): it looks up each row's leases by
    index instead of first hashing every live lease, which takes a
    millisecond at 4,000 of them. Returns SQL with ``%s`` placeholders and
    their parameters.
    """
    sql = f"""
        {table}.queue_open
        AND {table}.checked_at IS NOT NULL
        AND NOT EXISTS (
            SELECT 1 FROM {_ANNOTATION} a
            WHERE a.{CLAIM_COLUMN} = {table}.id AND a.annotator_id = %s
        )"""
    params: list[Any] = [annotator.pk]
    if now is not None:
        # Open and leased to no one else, or room for one label more than
        # the others' leases. For a long scan the live leases are hashed
        # once, so it passes the claims other experts hold (the head of the
        # queue) by a lookup each; leases are counted only for claims
        # needing two labels.
        others = f"""
            SELECT l.{CLAIM_COLUMN} FROM {_LEASE} l
            WHERE l.expires_at > %s AND l.annotator_id <> %s"""
        unleased = (
            f"NOT EXISTS ({others} AND l.{CLAIM_COLUMN} = {table}.id)"
            if few_rows
            else f"{table}.id NOT IN ({others})"
        )
        needed = f"annotator_labels_needed({table}.id, %s, %s)"
        sql += f"""
        AND ({unleased} OR ({table}.decisive_labels + 1 < {needed}
            AND {table}.decisive_labels + (
                SELECT count(*) FROM {_LEASE} l
                WHERE l.{CLAIM_COLUMN} = {table}.id AND l.expires_at > %s
                    AND l.annotator_id <> %s
            ) < {needed}))"""
        overlap = [project.overlap_share, project.overlap_labels]
        params += [now, annotator.pk, *overlap, now, annotator.pk, *overlap]
    return sql, params


def queue_available(
    *, project: Project, annotator, now: datetime | None, few_rows: bool = False
) -> QuerySet[Claim]:
    """Claims ``annotator`` may be handed now (unordered); see
    available_sql. The condition names the claim table itself, so use
    this queryset at the top level of a query, not as a subquery."""
    sql, params = available_sql(
        _CLAIM, project=project, annotator=annotator, now=now, few_rows=few_rows
    )
    return Claim.objects.filter(project=project).filter(
        RawSQL(sql, params, output_field=BooleanField())
    )


def queue_candidates(
    *,
    project: Project,
    annotator,
    now: datetime,
    exclude: Iterable[int] = (),
) -> QuerySet[Claim]:
    """Available claims outside the gold set in the project's order,
    row-locked as they are read.

    SKIP LOCKED lets concurrent hand-outs take different rows instead of
    queueing behind each other; NO KEY UPDATE does not block label inserts
    (their foreign key takes KEY SHARE on the claim).
    """
    queryset = gold_set.restrict(
        queue_available(project=project, annotator=annotator, now=now),
        project,
        gold=False,
    )
    exclude = list(exclude)
    if exclude:
        queryset = queryset.exclude(pk__in=exclude)
    order = QUEUE_STRATEGIES.get(project.queue_strategy, _order_uncertainty)
    return order(queryset, project=project, annotator=annotator).select_for_update(
        skip_locked=True, no_key=True, of=("self",)
    )


def queue_gold_draw(
    *,
    project: Project,
    annotator,
    now: datetime,
    exclude: Iterable[int],
    keys: tuple[float, float],
    limit: int,
) -> list[int]:
    """Up to ``limit`` available gold claims with a random key within
    ``keys`` (low inclusive), in the stored random order, row-locked as
    queue_candidates locks them: their ids.

    Written out for the reason available_sql is: the ORM took longer to build
    the statement than Postgres to run it, on every hand-out. A draw from a
    random key passes a few claims (the others hold one in five at most), so
    it looks up each one's leases by index.
    """
    available, params = available_sql(
        "c", project=project, annotator=annotator, now=now, few_rows=True
    )
    gold, gold_params = gold_set.condition_sql("c", project)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT c.id FROM {_CLAIM} c
            WHERE c.project_id = %s AND {available} AND {gold}
                AND NOT c.id = ANY(%s::bigint[])
                AND c.random_key >= %s AND c.random_key < %s
            ORDER BY c.random_key, c.id
            LIMIT %s
            FOR NO KEY UPDATE OF c SKIP LOCKED""",
            [project.pk, *params, *gold_params, list(exclude), *keys, limit],
        )
        return [row[0] for row in cursor.fetchall()]


def queue_held(
    *, project: Project, annotator, now: datetime, exclude: Iterable[int], limit: int
) -> list[int]:
    """The claims of the expert's live leases they have not labelled yet, but
    ``exclude``, oldest lease first: up to ``limit`` ids. Written out for the
    reason available_sql is: every hand-out asks it first."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT l.{CLAIM_COLUMN} FROM {_LEASE} l
                JOIN {_CLAIM} c ON c.id = l.{CLAIM_COLUMN}
            WHERE l.annotator_id = %s AND c.project_id = %s AND l.expires_at > %s
                AND NOT l.{CLAIM_COLUMN} = ANY(%s::bigint[])
                AND NOT EXISTS (
                    SELECT 1 FROM {_ANNOTATION} a
                    WHERE a.{CLAIM_COLUMN} = l.{CLAIM_COLUMN} AND a.annotator_id = %s
                )
            ORDER BY l.created_at, l.{CLAIM_COLUMN}
            LIMIT %s""",
            [annotator.pk, project.pk, now, list(exclude), annotator.pk, limit],
        )
        return [row[0] for row in cursor.fetchall()]


#: Claims left counted no further: a million-claim project's count took a
#: quarter of a second a batch (bench_queue_scale.py), counting 10,000 took
#: 9 ms of every batch's 13 (bench_queue_load.py), and past this many (four
#: hours of an expert's work) "left 1000+" says all an expert needs.
REMAINING_COUNTED = 1_000


def queue_progress(*, project: Project, annotator, now: datetime) -> dict[str, Any]:
    """Done, remaining (counted up to REMAINING_COUNTED) and pace for one
    expert on one project."""
    mine = Label.objects.filter(
        annotator=annotator, claim__project=project, source=Label.Source.UI
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
    available = queue_available(project=project, annotator=annotator, now=None)
    remaining = available[: REMAINING_COUNTED + 1].count()
    claims = Claim.objects.filter(project=project)
    return {
        "done": done["done"],
        "last_hour": done["last_hour"],
        "per_hour": round(3600 * len(recent) / seconds, 1) if seconds else None,
        "remaining": min(remaining, REMAINING_COUNTED),
        "remaining_more": remaining > REMAINING_COUNTED,
        # What an empty queue waits on: claims not checked yet (the partial
        # index of the check's work queue), or none uploaded at all.
        "unchecked": claims.filter(checked_at=None, queue_open=True).count(),
        "claims": claims.exists(),
    }


def labels_recent(*, project: Project, annotator) -> QuerySet[Label]:
    """The expert's own labels on the project, newest change first."""
    return (
        Label.objects.filter(
            annotator=annotator,
            claim__project=project,
            source=Label.Source.UI,
        )
        .select_related("claim")
        .order_by("-updated_at", "-pk")
    )
