"""Adjudication: reviewers settle the items experts disagreed on, and the
agreement behind them is measured per type and per pair of experts.

A project's overlap share is labelled by several experts to measure how far
they agree. Where they disagree, a majority used to settle the item silently
(a tie unsafe). Now the item waits in the adjudication queue of the project's
reviewers, who see every label with its note and time and decide; the
decision is the item's training and gold label (``training.expert_labels``).
The experts' labels stay as they were, so the disagreement is still measured.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet

from annotator.claims import records
from annotator.core.errors import ApplicationError
from annotator.labeling.labels import LABEL_NOTE_MAX_CHARS
from annotator.models import Adjudication, Claim, Label, Project, Role
from annotator.projects.access import project_role
from pipeline.evaluate import cohen_kappa, krippendorff_alpha
from pipeline.jsonl import text_problem

#: Roles that may adjudicate a project's disagreements.
REVIEW = (Role.ADMIN, Role.REVIEWER)


def _expert_labels(label: str):
    return Label.objects.filter(
        claim=OuterRef("pk"), annotator__isnull=False, label=label
    )


def disagreements(project: Project) -> QuerySet[Claim]:
    """The project's claims with a safe and an unsafe expert label."""
    return Claim.objects.filter(project=project).filter(
        Exists(_expert_labels(Label.Value.SAFE)),
        Exists(_expert_labels(Label.Value.UNSAFE)),
    )


def _labelled_by(reviewer):
    return Label.objects.filter(claim=OuterRef("pk"), annotator=reviewer)


def adjudication_items(
    project: Project, *, open_only: bool = False, reviewer=None
) -> list[dict]:
    """Each disagreement with every expert label on it (who, what, note,
    time spent, guideline version) and its adjudication, if any; the open
    ones first, oldest claim first. With ``reviewer``, only those they
    may decide: none they labelled themselves."""
    claims = (
        disagreements(project)
        .select_related("document", "project", "adjudication")
        .annotate(group=records.claim_group(project.kind))
    )
    if open_only:
        claims = claims.filter(adjudication__isnull=True)
    if reviewer is not None:
        claims = claims.exclude(Exists(_labelled_by(reviewer)))
    rows = list(claims.order_by("pk"))
    labels: dict[int, list[dict]] = defaultdict(list)
    for a in (
        Label.objects.filter(claim__in=rows, annotator__isnull=False)
        .select_related("annotator")
        .order_by("created_at")
    ):
        labels[a.claim_id].append(
            {
                "expert": a.annotator.get_username(),
                "label": a.label,
                "note": a.note,
                "seconds_spent": a.seconds_spent,
                "guideline_version": a.guideline_version,
                "correction": a.correction,
                "at": a.updated_at,
            }
        )
    statement = records.claim_statement(project)
    items = []
    for p in rows:
        decision = getattr(p, "adjudication", None)
        items.append(
            {
                "claim": p,
                "statement": statement(p.hypothesis, p.data),
                "labels": labels[p.pk],
                "adjudication": decision,
            }
        )
    items.sort(key=lambda item: item["adjudication"] is not None)
    return items


def adjudicate(*, claim: Claim, reviewer, label: str, note: str = "") -> Adjudication:
    """Record ``reviewer``'s decision on ``claim`` (a second decision
    replaces the first).

    Raises:
        ApplicationError: a label other than safe or unsafe, a note over the
            limit, a reviewer without the role, a reviewer who labelled the
            claim, or experts who do not disagree on it.
    """

    if label not in Adjudication.Label.values:
        raise ApplicationError(
            f"label must be one of {', '.join(Adjudication.Label.values)}"
        )
    if not isinstance(note, str) or len(note) > LABEL_NOTE_MAX_CHARS:
        raise ApplicationError(
            f"note: text of at most {LABEL_NOTE_MAX_CHARS} characters"
        )
    problem = text_problem(note)
    if problem:
        raise ApplicationError(f"note: {problem}")
    if project_role(reviewer, claim.project) not in REVIEW:
        raise ApplicationError(
            f"adjudicating needs the role {' or '.join(REVIEW)} on the project"
        )
    # A party to the disagreement would be judging their own label.
    if Label.objects.filter(claim=claim, annotator=reviewer).exists():
        raise ApplicationError(
            f"you labelled claim {claim.pk}: a reviewer who did not label it decides it"
        )
    with transaction.atomic():
        if not disagreements(claim.project).filter(pk=claim.pk).exists():
            raise ApplicationError(
                f"the experts do not disagree on claim {claim.pk}: "
                "nothing to adjudicate"
            )
        decision, _ = Adjudication.objects.update_or_create(
            claim=claim,
            defaults={"reviewer": reviewer, "label": label, "note": note},
        )
    return decision


# --- agreement ---------------------------------------------------------------


def _kappa_and_alpha(units: list[list[str]]) -> dict[str, Any]:
    pairs = [pair for labels in units for pair in combinations(labels, 2)]
    agree = sum(a == b for a, b in pairs)
    return {
        "items": len(units),
        "pairs": len(pairs),
        "observed": round(agree / len(pairs), 4) if pairs else None,
        "kappa": cohen_kappa(pairs),
        "alpha": krippendorff_alpha(units),
    }


def agreement_breakdown(project: Project) -> dict[str, Any]:
    """Agreement on the items several experts labelled decisively: overall,
    per type (the claim's group) and per pair of experts, each with Cohen's
    kappa over the pairs of labels and Krippendorff's alpha over the items
    (which, unlike pooled kappa, holds for more than two experts an item);
    and how many disagreements there are and are still open."""
    labels: dict[int, list[tuple[str, str]]] = defaultdict(list)
    types: dict[int, str] = {}
    for claim_id, type_, expert, label in (
        Label.objects.filter(
            claim__project=project,
            annotator__isnull=False,
            label__in=Label.DECISIVE,
        )
        .order_by("claim_id", "annotator_id")
        .values_list(
            "claim_id",
            records.claim_group(project.kind, "claim__data"),
            "annotator__username",
            "label",
        )
    ):
        labels[claim_id].append((expert, label))
        types[claim_id] = type_
    overlap = {p: rows for p, rows in labels.items() if len(rows) >= 2}
    by_type: dict[str, list[list[str]]] = defaultdict(list)
    by_pair: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for p, rows in overlap.items():
        by_type[types[p]].append([label for _, label in rows])
        for (a, la), (b, lb) in combinations(sorted(rows), 2):
            by_pair[a, b].append((la, lb))
    pairs = []
    for (a, b), pair_labels in sorted(by_pair.items()):
        row = _kappa_and_alpha([[x, y] for x, y in pair_labels])
        pairs.append({"experts": (a, b), **row})
    disagreeing = disagreements(project)
    return {
        "overall": _kappa_and_alpha(
            [[label for _, label in r] for r in overlap.values()]
        ),
        "by_type": [
            {"type": type_, **_kappa_and_alpha(units)}
            for type_, units in sorted(by_type.items())
        ],
        "by_pair": pairs,
        "disagreements": disagreeing.count(),
        "open": disagreeing.filter(adjudication__isnull=True).count(),
    }
