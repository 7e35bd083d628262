"""The gold test set: a random slice of each project's documents.

Its labels measure scorer versions and are never trained on, so membership
must not depend on anything the loop changes (scores, labels, order). It is
a fixed hash of the document id, computable in Python and in SQL alike, and
by document, so a gold document's claims never share text with
training data.
"""

from __future__ import annotations

from django.db.models import BigIntegerField, F
from django.db.models.functions import Mod

# Different constants from the overlap buckets, so the two slices are
# independent of each other.
_MULTIPLIER = 104729
_MODULUS = 10009


def _cutoff(share: float) -> int:
    return round(share * _MODULUS)


def is_gold_document(project, document_id: int) -> bool:
    return (document_id * _MULTIPLIER) % _MODULUS < _cutoff(project.gold_share)


def condition_sql(table: str, project) -> tuple[str, list[int]]:
    """The SQL condition true where the claim row ``table`` is in the gold
    set, with its parameters: ``restrict``'s rule for a written-out
    statement."""
    return (
        f"mod({table}.document_id * {_MULTIPLIER}, {_MODULUS}) < %s",
        [_cutoff(project.gold_share)],
    )


def restrict(queryset, project, *, gold: bool, document_field: str = "document_id"):
    """``queryset`` restricted to the gold set (gold=True) or to its training
    side (False).

    ``document_field`` names the document id from the queryset's model, e.g.
    ``"claim__document_id"`` for labels.
    """
    bucket = Mod(
        F(document_field) * _MULTIPLIER, _MODULUS, output_field=BigIntegerField()
    )
    queryset = queryset.alias(gold_bucket=bucket)
    cutoff = _cutoff(project.gold_share)
    if gold:
        return queryset.filter(gold_bucket__lt=cutoff)
    return queryset.filter(gold_bucket__gte=cutoff)
