"""Expert labels and the labeling queue: hand-outs under leases, saves from
the page's outbox (every client_id remembered, so a resend never counts
twice), undo.
"""

from __future__ import annotations

import json
import math
import random
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import (
    IntegrityError,
    connection,
    transaction,
)
from django.db.models import Case, F, Value, When
from django.db.models.functions import Abs, Coalesce
from django.utils import timezone

from annotator.core.errors import ApplicationError, LabelConflict, LabelInvalid
from annotator.labeling import guidelines, queue
from annotator.models import (
    UNSCORED_UNCERTAINTY,
    Claim,
    Label,
    LabelReceipt,
    Lease,
    Project,
    Verdict,
)
from pipeline.checkers import checker_class
from pipeline.jsonl import text_problem, value_problem

LABEL_NOTE_MAX_CHARS = 10_000


LABEL_VALUE_MAX_CHARS = 10_000  # a correction, written as JSON


LABEL_VALUE_MAX_DEPTH = 20


LABELS_BATCH_MAX = 500


def _json_problem(value: Any) -> str | None:
    problem = value_problem(value, max_depth=LABEL_VALUE_MAX_DEPTH)
    if problem:
        return problem
    size = len(json.dumps(value, ensure_ascii=False))
    if size > LABEL_VALUE_MAX_CHARS:
        return f"{size} characters as JSON, over the limit of {LABEL_VALUE_MAX_CHARS}"
    return None


def _label_values(
    claim: Claim, *, guideline_version: int | None, **values
) -> dict[str, Any]:
    """The label's fields as stored, once checked, its guideline version
    resolved; LabelInvalid if one cannot be stored."""
    problem = _label_problem(claim, **values)
    if problem:
        raise LabelInvalid(problem)
    values["guideline_version"] = guidelines.label_guideline_version(
        project_id=claim.project_id, version=guideline_version
    )
    return values


def _label_problem(
    claim: Claim, *, label, correction, suggestion, note, seconds_spent
) -> str | None:
    """Why a label of ``claim`` cannot be stored, checked before any write.
    The API's serializers check shapes; this is the last check before the
    database."""

    if label not in Label.Value.values:
        return f"label: one of {', '.join(Label.Value.values)}"
    if not isinstance(note, str):
        return "note: must be text"
    if len(note) > LABEL_NOTE_MAX_CHARS:
        return f"note: {len(note)} characters, over the limit of {LABEL_NOTE_MAX_CHARS}"
    problem = text_problem(note)
    if problem:
        return f"note: {problem}"
    if correction is not None:
        kind = claim.project.kind
        problem = _json_problem(correction) or checker_class(
            kind
        ).claim_data.correction_problem(correction)
        if problem:
            return f"correction: {problem}"
    if suggestion not in ("", *Label.Suggestion.values):
        return f"suggestion: empty or one of {', '.join(Label.Suggestion.values)}"
    if suggestion == Label.Suggestion.ACCEPTED and correction is None:
        return "suggestion: an accepted suggestion must be sent as the correction"
    if seconds_spent is not None and (
        isinstance(seconds_spent, bool)
        or not isinstance(seconds_spent, (int, float))
        or not math.isfinite(seconds_spent)
        or seconds_spent < 0
    ):
        return "seconds_spent: a number of seconds, 0 or more"
    return None


#: The fields an earlier release sent a label's correction in, still read for
#: one release where ``correction`` is absent.
OLD_CORRECTION_FIELDS = ("corrected_value", "corrected_type")


def label_correction(claim: Claim, sent: Mapping[str, Any]) -> Any:
    """The correction a label of ``claim`` sends: its ``correction``, or one
    made of an earlier release's fields, the value under what the claim says
    and the type under the kind's group (a kind without groups refuses it)."""
    value, type_ = (sent.get(name) for name in OLD_CORRECTION_FIELDS)
    if "correction" in sent or (value is None and not type_):
        return sent.get("correction")
    spec = checker_class(claim.project.kind).claim_data
    correction = {} if value is None else {spec.corrects[0]: value}
    if type_:
        correction[spec.group or "type"] = type_
    return correction


def _client_uuid(client_id: Any) -> uuid.UUID | None:
    if client_id is None or isinstance(client_id, uuid.UUID):
        return client_id
    try:
        return uuid.UUID(str(client_id))
    except ValueError:
        raise LabelInvalid("client_id: must be a UUID") from None


# The label's save, written out: a receipt taken by INSERT ... ON CONFLICT
# and the label upserted on its one-per-expert constraint, instead of a look
# at each, a savepoint and the ORM's inserts (ten statements, the labeling
# page's most frequent request). A concurrent save of the same client_id
# waits on the receipt's unique key, then finds it taken: a duplicate.
_RECEIPT = LabelReceipt._meta.db_table
_LABEL = Label._meta.db_table
_LEASE = Lease._meta.db_table


def _receipt_taken(
    cursor, client_id: uuid.UUID, *, claim: Claim, annotator, now
) -> bool:
    """Keep a receipt of ``client_id`` for this expert's label of ``claim``:
    False when it was processed before. LabelConflict if it was used for any
    other label."""
    cursor.execute(
        f"""
        INSERT INTO {_RECEIPT} (client_id, annotator_id, {queue.CLAIM_COLUMN},
            created_at)
        VALUES (%s, %s, %s, %s)
        ON CONFLICT (client_id) DO NOTHING
        RETURNING client_id""",
        [client_id, annotator.pk, claim.pk, now],
    )
    if cursor.fetchone() is not None:
        return True
    cursor.execute(
        f"SELECT annotator_id, {queue.CLAIM_COLUMN} FROM {_RECEIPT} "
        "WHERE client_id = %s",
        [client_id],
    )
    if cursor.fetchone() != (annotator.pk, claim.pk):
        raise LabelConflict("client_id already used")
    return False


def _label_upsert(cursor, *, claim: Claim, annotator, fields: dict[str, Any]):
    """Insert the expert's label of ``claim``, or update the one there (a
    relabel): its id, and whether it was created."""
    given = {"claim": claim.pk, "annotator": annotator.pk, **fields}
    columns, params = [], []
    for field in Label._meta.concrete_fields:
        if field.primary_key:
            continue
        value = given[field.name] if field.name in given else field.get_default()
        columns.append(field.column)
        params.append(field.get_db_prep_save(value, connection))
    changed = [Label._meta.get_field(name).column for name in fields]
    changed.remove(Label._meta.get_field("created_at").column)
    # A row's xmax is 0 where this statement inserted it, and the updating
    # transaction's id where it updated one.
    cursor.execute(
        f"""
        INSERT INTO {_LABEL} ({", ".join(columns)})
        VALUES ({", ".join(["%s"] * len(columns))})
        ON CONFLICT ({queue.CLAIM_COLUMN}, annotator_id)
            WHERE annotator_id IS NOT NULL
        DO UPDATE SET {", ".join(f"{c} = EXCLUDED.{c}" for c in changed)}
        RETURNING id, xmax = 0""",
        params,
    )
    return cursor.fetchone()


def _label_write(
    *,
    claim: Claim,
    annotator,
    client_id: uuid.UUID | None,
    values: dict[str, Any],
    release_lease: bool = False,
) -> tuple[int | None, str]:
    """Save checked ``values`` as the expert's label of ``claim`` in one
    transaction: the label's id and what happened (see label_submit). With
    ``release_lease``, a save (not a duplicate) ends the expert's lease on
    the claim. LabelConflict for a client_id taken."""
    now = timezone.now()
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            if client_id is not None and not _receipt_taken(
                cursor, client_id, claim=claim, annotator=annotator, now=now
            ):
                # A retry, or a stale resend of a label since changed or
                # undone: never written over the expert's later decision.
                current = (
                    Label.objects.filter(claim=claim, annotator=annotator)
                    .values_list("pk", flat=True)
                    .first()
                )
                return current, "duplicate"
            # A relabel takes the new client_id (undo names the label by it);
            # the old one keeps its receipt.
            fields = {
                **values,
                "client_id": client_id,
                "source": Label.Source.UI,
                "created_at": now,
                "updated_at": now,
            }
            label_id, created = _label_upsert(
                cursor, claim=claim, annotator=annotator, fields=fields
            )
            if release_lease:
                cursor.execute(
                    f"DELETE FROM {_LEASE} "
                    f"WHERE {queue.CLAIM_COLUMN} = %s AND annotator_id = %s",
                    [claim.pk, annotator.pk],
                )
    except IntegrityError as e:
        # The label's client_id is unique too: a label of a deleted user (no
        # receipt left) holds it.
        raise LabelConflict("client_id already used") from e
    return label_id, "created" if created else "updated"


def label_submit(
    *,
    claim: Claim,
    annotator,
    label: str,
    correction: dict[str, Any] | None = None,
    suggestion: str = "",
    note: str = "",
    seconds_spent: float | None = None,
    guideline_version: int | None = None,
    client_id=None,
) -> tuple[Label | None, str]:
    """Save an expert's label; a relabel of the claim updates it in place.

    Returns the expert's label of the claim and what happened: created,
    updated, or duplicate: the client_id was processed before (a retry, or a
    stale resend of a label since changed or undone) and nothing changed; the
    label returned is then the current one, None once undone. Every client_id
    processed keeps a LabelReceipt.

    The label records ``guideline_version``, a version of the project's
    guideline, or its latest version when None (see
    ``guidelines.label_guideline_version``).

    Raises LabelInvalid for a label that cannot be stored, LabelConflict for a
    client_id used for another label.
    """
    label_id, status = _label_write(
        claim=claim,
        annotator=annotator,
        client_id=_client_uuid(client_id),
        values=_label_values(
            claim,
            label=label,
            correction=correction,
            suggestion=suggestion,
            note=note,
            seconds_spent=seconds_spent,
            guideline_version=guideline_version,
        ),
    )
    stored = None if label_id is None else Label.objects.get(pk=label_id)
    return stored, status


def label_change(
    *,
    stored: Label,
    label: str,
    correction: dict[str, Any] | None = None,
    suggestion: str = "",
    note: str = "",
    seconds_spent: float | None = None,
    guideline_version: int | None = None,
    client_id=None,
) -> tuple[Label | None, str]:
    """Change a stored label in place (the API's PUT and PATCH).

    A new client_id makes it a new decision, as in ``label_submit``. None,
    or the label's own client_id (a client sending back what it read), keeps
    the label's client_id: no receipt names the change, and it is never taken
    for a resend of the label.

    A change is a decision made now: it records ``guideline_version`` as
    ``label_submit`` does, the latest version when None.
    """
    values = _label_values(
        stored.claim,
        label=label,
        correction=correction,
        suggestion=suggestion,
        note=note,
        seconds_spent=seconds_spent,
        guideline_version=guideline_version,
    )
    client_id = _client_uuid(client_id)
    if client_id is not None and client_id != stored.client_id:
        return label_submit(
            claim=stored.claim,
            annotator=stored.annotator,
            client_id=client_id,
            **values,
        )
    with transaction.atomic():
        row = Label.objects.select_for_update().filter(pk=stored.pk).first()
        if row is None:
            raise LabelInvalid("the label was deleted meanwhile")
        for name, value in values.items():
            setattr(row, name, value)
        row.save(update_fields=[*values, "updated_at"])
    return row, "updated"


def queue_keys_refresh(*, project: Project) -> None:
    """Recompute Claim.uncertainty if the active threshold has moved.

    Every hand-out calls this first, so a threshold changed by any path (a
    scorer activated, edited or deleted, the project edited in the admin)
    reorders the queue without each of them having to remember to.
    """

    threshold = queue.active_threshold(project)
    if project.uncertainty_threshold == threshold:
        return
    with transaction.atomic():
        # Claimed by updating the project row: a concurrent hand-out blocks on
        # it, then finds the threshold already current and skips the work.
        claimed = (
            Project.objects.filter(pk=project.pk)
            .exclude(uncertainty_threshold=threshold)
            .update(uncertainty_threshold=threshold)
        )
        if claimed:
            # Waits for rows a running check holds, then recomputes them too.
            Claim.objects.filter(project=project).update(
                uncertainty=Coalesce(
                    Abs(F("score") - threshold),
                    Case(
                        When(
                            verdict=Verdict.UNSCORED,
                            then=Value(UNSCORED_UNCERTAINTY),
                        )
                    ),
                )
            )
    project.uncertainty_threshold = threshold


def _commit_without_waiting_for_disk(cursor) -> None:
    # Leases are disposable: one lost in a crash only returns its claim
    # to the pool early. Not waiting for the WAL flush at commit saves the
    # hand-out its slowest step (tens of ms on a busy disk); the transaction
    # stays atomic and consistent, only its durability is relaxed.
    cursor.execute("SET LOCAL synchronous_commit TO OFF")


def _queue_candidates(
    *, project: Project, annotator, now, exclude: set[int], n: int
) -> list[int]:
    """Lock up to ``n`` available claims, the gold slice's share of them
    drawn from the gold documents at random, the rest in the project's
    queue order; each side fills in for the other when it runs dry.

    The gold claims come in the stored random order from a random key on,
    wrapping round to the keys below it: which claims are drawn still depends
    on nothing the loop changes, and a hand-out does not pass, as it would
    from the order's start, every gold claim already out with the other
    experts and the nine in ten claims outside the gold set between them.
    """

    n_gold = sum(random.random() < project.gold_share for _ in range(n))
    start = random.random()
    gold_keys = ((start, math.inf), (-math.inf, start))
    taken: list[int] = []

    def draw(gold: bool, want: int) -> None:
        want = min(want, n - len(taken))
        if gold:
            for keys in gold_keys:
                if want <= 0:
                    return
                ids = queue.queue_gold_draw(
                    project=project,
                    annotator=annotator,
                    now=now,
                    exclude=exclude | set(taken),
                    keys=keys,
                    limit=want,
                )
                taken.extend(ids)
                want -= len(ids)
        elif want > 0:
            taken.extend(
                queue.queue_candidates(
                    project=project,
                    annotator=annotator,
                    now=now,
                    exclude=exclude | set(taken),
                ).values_list("pk", flat=True)[:want]
            )

    draw(True, n_gold)
    draw(False, n - n_gold)
    draw(True, n)
    return taken


def labeling_next(
    *, project: Project, annotator, count: int, exclude: Iterable[int] = ()
) -> list[int]:
    """Lease up to ``count`` claims to ``annotator``; their ids, in order.

    The expert's own live leases come first (a reload resumes where they
    were), then new claims in the project's queue order. ``exclude``
    names claims the page already holds or has labels for in its outbox.
    """

    queue_keys_refresh(project=project)
    now = timezone.now()
    expires = now + timedelta(seconds=settings.LABEL_LEASE_SECONDS)
    exclude = set(exclude)
    with transaction.atomic(), connection.cursor() as cursor:
        _commit_without_waiting_for_disk(cursor)

        def lease(ids: list[int]) -> list[int]:
            return _leases_take(
                cursor,
                ids,
                project=project,
                annotator=annotator,
                now=now,
                expires=expires,
            )

        held = queue.queue_held(
            project=project, annotator=annotator, now=now, exclude=exclude, limit=count
        )
        leased = lease(held)
        seen = exclude | set(held)
        # A second round only when a concurrent hand-out took rows between
        # our snapshot and our lock.
        for _ in range(2):
            wanted = count - len(leased)
            if wanted <= 0:
                break
            locked = _queue_candidates(
                project=project, annotator=annotator, now=now, exclude=seen, n=wanted
            )
            if not locked:
                break
            seen.update(locked)
            leased += lease(locked)
    return leased


def _leases_take(
    cursor, ids: list[int], *, project: Project, annotator, now, expires
) -> list[int]:
    """Lease those of ``ids`` still available, in order.

    The candidates' snapshot predates their locks: a row a competitor leased
    and committed after it was taken but before we reached it passed the
    filter. We hold the row locks now, so any competing lease on them is
    committed, and this new statement sees it. Held leases are renewed.
    """

    if not ids:
        return []
    condition, params = queue.available_sql(
        "p", project=project, annotator=annotator, now=now, few_rows=True
    )
    cursor.execute(
        f"""
        INSERT INTO {Lease._meta.db_table}
            ({queue.CLAIM_COLUMN}, annotator_id, expires_at, created_at)
        SELECT p.id, %s, %s, %s
        FROM unnest(%s::bigint[]) AS w(id)
            JOIN {Claim._meta.db_table} p ON p.id = w.id
        WHERE {condition}
        ON CONFLICT ({queue.CLAIM_COLUMN}, annotator_id)
            DO UPDATE SET expires_at = EXCLUDED.expires_at
        RETURNING {queue.CLAIM_COLUMN}""",
        [annotator.pk, expires, now, ids, *params],
    )
    leased = {row[0] for row in cursor.fetchall()}
    return [pk for pk in ids if pk in leased]


@dataclass
class LabelResult:
    client_id: str
    status: str  # created | updated | duplicate | error
    id: int | None = None
    claim: int | None = None
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "client_id": self.client_id,
            "status": self.status,
            "id": self.id,
            "claim": self.claim,
            "error": self.error,
        }


def _labelable_claim(project: Project, pk: Any) -> Claim | None:
    # An id out of bigint's range would be a database error, not a miss.
    if isinstance(pk, bool) or not isinstance(pk, int) or not 0 < pk < 2**63:
        return None
    # A label needs the claim's id and project, not its data and evidence.
    claim = Claim.objects.filter(project=project, pk=pk).only("project").first()
    if claim is not None:
        claim.project = project
    return claim


def labels_submit(
    *, project: Project, annotator, labels: list[dict[str, Any]]
) -> list[LabelResult]:
    """Save a batch of labels from the labeling page's outbox, in order.

    Each label is its own transaction and gets its own result: one bad label
    (a claim deleted meanwhile, a note too long) is reported and the rest
    still go in. A label whose client_id was processed before is a retry, or a
    stale resend, and comes back as ``duplicate`` without changing anything.
    """
    results = []
    for data in labels:
        client_id = str(data["client_id"])
        # Another project's claim is as missing as one never imported.
        claim = _labelable_claim(project, data["claim"])
        if claim is None:
            results.append(LabelResult(client_id, "error", error="no such claim"))
            continue
        try:
            label_id, status = _label_write(
                claim=claim,
                annotator=annotator,
                client_id=_client_uuid(client_id),
                values=_label_values(
                    claim,
                    label=data["label"],
                    correction=label_correction(claim, data),
                    suggestion=data.get("suggestion") or "",
                    note=data.get("note") or "",
                    seconds_spent=data.get("seconds_spent"),
                    guideline_version=data.get("guideline_version"),
                ),
                # Not for a duplicate: the expert may hold the claim again
                # since (leased back by an undo).
                release_lease=True,
            )
        except ApplicationError as e:
            results.append(LabelResult(client_id, "error", error=str(e)))
            continue
        results.append(
            LabelResult(
                client_id,
                status,
                id=label_id,
                claim=claim.pk,
            )
        )
    return results


def label_undo(*, project: Project, annotator, client_id: str) -> int | None:
    """Delete the expert's label saved under ``client_id``; safe to repeat.

    The claim is leased back to the expert, who is about to label it
    again. Returns its id, or None when there was nothing to delete (already
    undone, or replaced by a later label of the same claim). The label's
    receipt stays: a late resend of the undone label is a duplicate, and does
    not bring it back.
    """
    with transaction.atomic():
        stored = (
            Label.objects.select_for_update()
            .filter(
                client_id=client_id,
                annotator=annotator,
                claim__project=project,
            )
            .first()
        )
        if stored is None:
            return None
        claim_id = stored.claim_id
        stored.delete()
        Lease.objects.update_or_create(
            claim_id=claim_id,
            annotator=annotator,
            defaults={
                "expires_at": timezone.now()
                + timedelta(seconds=settings.LABEL_LEASE_SECONDS)
            },
        )
    return claim_id
