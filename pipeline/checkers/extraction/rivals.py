"""Values that compete with a claim for its evidence (issue 28).

A scorer that reads one claim alone passes "Appellee: Roe" when the caption
says Roe is the appellant: both statements look alike and the span names
Roe. Read beside its rivals (the same value in the counter-role, the other
dates of the line, the other values of its type the span names) a claim
that another one outscores by a margin is doubtful: the scorer then judges
which value the evidence states, which it does better than whether one
value is stated at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...types import Claim
from .hypothesis import render_hypothesis, type_display_name
from .patterns import date_parts, find_dates
from .schema import Schema
from .silver import counter_role, value_anchored


def _same_value(a: Any, b: Any) -> bool:
    """Values equal once case and spacing are ignored (a date by its parts)."""
    if isinstance(a, dict) and "yyyy" in a:
        return date_parts(a) == date_parts(b)
    return " ".join(str(a).casefold().split()) == " ".join(str(b).casefold().split())


def rival_hypotheses(
    claim: Claim,
    span: str,
    neighbours: Sequence[Claim],
    *,
    schema: Schema | None = None,
) -> list[str]:
    """The hypotheses that compete with ``claim``'s for ``span``.

    Its value in the counter-role (``Appellant`` for ``Appellee``); for a
    date, every other date the span states; else the values of its type (or
    of its counter-role) that other claims of the document hold and the
    span names (``neighbours``: the document's claims).
    """
    own = render_hypothesis(claim.type, claim.value, schema=schema)
    shown = own.split(": ", 1)[1]
    role = counter_role(type_display_name(claim.type, schema))
    rivals = [f"{role}: {shown}"] if role else []
    value = claim.value
    if isinstance(value, dict) and "yyyy" in value:
        others = [v for _, _, v in find_dates(span)]
    else:
        kinds = {claim.type, role}
        others = [
            q.value
            for q in neighbours
            if q.type in kinds and value_anchored(span, q.value)
        ]
    rivals += [
        render_hypothesis(claim.type, v, schema=schema)
        for v in others
        if not _same_value(v, value)
    ]
    return list(dict.fromkeys(h for h in rivals if h != own))
