"""Silver labels: training pairs made from unlabelled aligned claims.

The paper (4.2.2) pre-trains the scorer on LLM-grader labels. Without an LLM
we make silver pairs by controlled perturbation of aligned claims: the
aligned span with its own hypothesis is a positive (when the value is
anchored in the span), and negatives come from swapping values within a type,
swapping types, shifting dates and swapping contexts. Type names are varied
so the scorer learns "does this span support this typed value", not one
corpus's field names.
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ...types import Alignment, Claim
from ..base import Example
from .hypothesis import render_hypothesis, type_display_name
from .patterns import MONTHS, date_parts, find_dates
from .schema import Schema

_WORD = re.compile(r"[^\W_]{3,}")


def _fold(text: str) -> str:
    """Lower case, no accents, no spaces: OCR splits and case don't hide words."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(
        c for c in decomposed if not c.isspace() and not unicodedata.combining(c)
    )


def value_anchored(span: str, value: Any) -> bool:
    """Whether something checkable of ``value`` appears in ``span``.

    Dates need their year, names their last name, strings one of their words
    (ignoring case, accents and spaces). ``None`` counts as anchored. This
    filters silver positives: an aligned claim whose value appears
    nowhere in its span is more likely a hallucination than a positive.
    """
    text = _fold(span)
    if isinstance(value, dict):
        if value.get("yyyy") not in (None, ""):
            return _fold(str(value["yyyy"])) in text
        if value.get("last_name"):
            return _fold(str(value["last_name"])) in text
        value = " ".join(str(v) for v in value.values() if v is not None)
    words = _WORD.findall(str(value or "").lower())
    return not words or any(_fold(w) in text for w in words)


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        return "date" if "yyyy" in value else "record"
    return "text"


def categorical_types(
    aligned: Sequence[tuple[Claim, Alignment]], schema: Schema | None = None
) -> set[str]:
    """Types whose values come from a small closed set (Public / Private...).

    Their spans often paraphrase the value ("in camera" for Private), so a
    missing anchor says nothing: their positives are kept unfiltered.
    """
    values: dict[str, set[str]] = defaultdict(set)
    counts: dict[str, int] = defaultdict(int)
    for p, _ in aligned:
        values[p.type].add(str(p.value))
        counts[p.type] += 1
    closed = {t for t in values if counts[t] >= 20 and len(values[t]) <= 6}
    if schema:
        closed |= {name for name, spec in schema.entity_types.items() if spec.enum}
    return closed


def _shift_date(value: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    keys = [k for k in ("yyyy", "mm", "dd") if str(value.get(k) or "").isdigit()]
    if not keys:
        return None
    key = rng.choice(keys)
    old = int(value[key])
    bounds = {"yyyy": (1000, 2999), "mm": (1, 12), "dd": (1, 28)}[key]
    choices = [
        v for v in range(old - 3, old + 4) if v != old and bounds[0] <= v <= bounds[1]
    ]
    if key != "yyyy" and old <= 12 and rng.random() < 0.3:
        # Day and month swapped, the classic US/EU date mix-up.
        other = "dd" if key == "mm" else "mm"
        if str(value.get(other) or "").isdigit() and int(value[other]) != old:
            return {**value, key: value[other], other: value[key]}
    return {**value, key: str(rng.choice(choices)).zfill(len(str(value[key])))}


def _other_digit(text: str, rng: random.Random) -> str | None:
    """``12-CF-1657`` -> ``12-CF-1658``: one digit off, as a skimming reader
    (or an extractor) gets a docket or file number wrong."""
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    if not digits:
        return None
    i = rng.choice(digits)
    new = rng.choice([d for d in "0123456789" if d != text[i]])
    return text[:i] + new + text[i + 1 :]


def near_miss(
    value: Any, span: str, names: Sequence[Any], rng: random.Random
) -> Any | None:
    """A value a small edit away from ``value``.

    The wrong values extractors really produce: a date a few days, a month or
    a year off (or day and month swapped), a person's right last name with
    another first name or the right first name with another last name, a
    number one digit off. A borrowed name part or a changed number is never
    one ``span`` states; a shifted date is not checked against it. ``names``
    are other person values to borrow from. None when no such edit fits.
    """
    if isinstance(value, dict) and "yyyy" in value:
        return _shift_date(value, rng)
    text = _fold(span)
    if isinstance(value, dict) and value.get("last_name"):
        part = "last_name"
        if value.get("first_name") and rng.random() < 0.5:
            part = "first_name"
        options = {
            str(n[part])
            for n in names
            if isinstance(n, dict) and n.get(part) and _fold(str(n[part])) not in text
        }
        options.discard(str(value[part]))
        return {**value, part: rng.choice(sorted(options))} if options else None
    if isinstance(value, str) and any(c.isdigit() for c in value):
        changed = _other_digit(value, rng)
        return changed if changed and _fold(changed) not in text else None
    return None


def span_states(span: str, value: Any) -> bool:
    """Whether ``span`` states ``value``: a date must be there itself (its
    year alone is not enough, a document's dates share it), anything else
    anchored (:func:`value_anchored`)."""
    if isinstance(value, dict) and "yyyy" in value:
        wanted = date_parts(value)
        return any(date_parts(found) == wanted for _, _, found in find_dates(span))
    return value_anchored(span, value)


def vary_case(text: str, rng: random.Random) -> str:
    """The same value in another letter case (``BURROW``, ``burrow``): what
    documents and extractors do to names, and no reason to flag."""
    return rng.choice((text.upper(), text.lower(), text.title()))


def vary_type_name(name: str, rng: random.Random) -> str:
    """Another way of writing a type name (``Hearing Date`` -> ``Date of Hearing``)."""
    words = name.split()
    roll = rng.random()
    if len(words) == 2 and roll < 0.35:
        return f"{words[1]} of {words[0]}"
    if roll < 0.55:
        return name.lower()
    if roll < 0.7:
        return name.replace(" ", "")
    return name


#: Each role and the one it is confused with: "the appellee given as the
#: appellant" is a common extraction mistake a copied caption cannot catch.
_COUNTER_ROLE = {
    "petitioner": "respondent",
    "respondent": "petitioner",
    "appellant": "appellee",
    "appellee": "appellant",
    "plaintiff": "defendant",
    "defendant": "plaintiff",
    "applicant": "respondent",
    "claimant": "respondent",
    "buyer": "seller",
    "seller": "buyer",
    "landlord": "tenant",
    "tenant": "landlord",
    "employer": "employee",
    "employee": "employer",
}
_ROLE_WORD = re.compile(r"\b(" + "|".join(_COUNTER_ROLE) + r")\b", re.IGNORECASE)


def counter_role(type_name: str) -> str | None:
    """``Counsel for Appellant`` -> ``Counsel for Appellee``; None without a role."""
    m = _ROLE_WORD.search(type_name)
    if not m:
        return None
    other = _COUNTER_ROLE[m.group(1).lower()]
    if m.group(1).isupper():
        other = other.upper()
    elif m.group(1)[0].isupper():
        other = other.capitalize()
    return type_name[: m.start()] + other + type_name[m.end() :]


def date_text(value: dict[str, Any], rng: random.Random) -> str | None:
    """A full date in one of the ways documents and extractors write it, so
    the scorer learns that "Sept. 30, 2014" supports 2014-09-30."""
    try:
        y, m, d = int(value["yyyy"]), int(value["mm"]), int(value["dd"])
    except (KeyError, TypeError, ValueError):
        return None
    if not 1 <= m <= 12:
        return None
    month = MONTHS[m - 1]
    return rng.choice(
        (
            f"{y:04d}-{m:02d}-{d:02d}",
            f"{month} {d}, {y}",
            f"{d} {month} {y}",
            f"{month[:3]}. {d}, {y}",
            f"{m:02d}/{d:02d}/{y}",
        )
    )


#: Chance that a negative is a hard one (the right evidence with a
#: near-identical or same-document value, the other role) rather than an easy
#: one (another corpus value, type or context).
HARD_SHARE = 0.6
#: Share of hypotheses whose value is written in another letter case.
CASE_SHARE = 0.15


def silver_examples(
    aligned: Sequence[tuple[Claim, Alignment]],
    *,
    schema: Schema | None = None,
    negatives_per_positive: float = 1.5,
    hard_share: float = HARD_SHARE,
    seed: int = 0,
) -> list[Example]:
    """Make silver pairs from aligned claims of unlabelled documents.

    Each anchored claim gives a positive (its value now and then in
    another letter case, a date in another format) and up to
    ``negatives_per_positive`` negatives. Hard ones keep the right evidence
    and change the value as extractors really do (issue 16): another value of
    its type from the same span (the other party, the other date of a line,
    another judge of a panel), its counter-role (appellee for appellant), a
    near miss (:func:`near_miss`), or another value of its type from the same
    document. Easy ones take another value of its type from elsewhere, another
    type, or another context of its document.

    Args:
        aligned: claims with their alignment (kept ones only), and
            fields found by pattern (:mod:`.patterns`).
        schema: display names and renderers, as for checking.
        negatives_per_positive: how many perturbations to draw per positive.
        hard_share: chance that a negative is a hard one (when it has one).
        seed: makes the draw reproducible.
    """
    rng = random.Random(seed)
    values_by_type: dict[str, list[Any]] = defaultdict(list)
    spans_by_doc: dict[str, list[tuple[Claim, str]]] = defaultdict(list)
    for p, a in aligned:
        values_by_type[p.type].append(p.value)
        spans_by_doc[p.document_id].append((p, a.text))
    types = sorted(values_by_type)
    shapes = {p.type: _shape(p.value) for p, _ in aligned}
    closed = categorical_types(aligned, schema)

    def hypothesis(type_name: str, value: Any) -> str:
        shown = None
        if isinstance(value, dict) and "yyyy" in value and rng.random() < 0.5:
            shown = date_text(value, rng)
        if shown is None:
            shown = render_hypothesis(type_name, value, schema=schema).split(": ", 1)[1]
            if rng.random() < CASE_SHARE:
                shown = vary_case(shown, rng)
        name = vary_type_name(type_display_name(type_name, schema), rng)
        return f"{name}: {shown}"

    def rendered(type_name: str, value: Any) -> str:
        return render_hypothesis(type_name, value, schema=schema)

    def in_span(p: Claim, span: str) -> list[Any]:
        """Other values of p's type (or, for dates, any date) in its span."""
        own = rendered(p.type, p.value)
        if shapes[p.type] == "date":
            found = [value for _, _, value in find_dates(span)]
        else:
            # The other party counts too: the appellee given as the appellant.
            kinds = {p.type, counter_role(p.type)}
            found = [
                q.value
                for q, _ in spans_by_doc[p.document_id]
                if q.type in kinds and value_anchored(span, q.value)
            ]
        return [v for v in found if rendered(p.type, v) != own]

    names = [
        v
        for values in values_by_type.values()
        for v in values
        if isinstance(v, dict) and v.get("last_name")
    ]

    examples = []
    for p, a in aligned:
        span = a.text
        if not span or (p.type not in closed and not value_anchored(span, p.value)):
            continue
        doc = p.document_id
        examples.append(
            Example(span, hypothesis(p.type, p.value), True, doc, "silver:copy")
        )
        own = rendered(p.type, p.value)
        hard, easy = [], []
        neighbours = in_span(p, span)
        if neighbours:
            hard.append(("swap_in_span", p.type, rng.choice(neighbours), span))
        role = counter_role(type_display_name(p.type, schema))
        if role:
            hard.append(("swap_role", role, p.value, span))
        near = near_miss(p.value, span, rng.sample(names, min(20, len(names))), rng)
        if near is not None and rendered(p.type, near) != own:
            hard.append(("near_miss", p.type, near, span))
        same_doc = [
            q.value
            for q, _ in spans_by_doc[doc]
            if shapes[q.type] == shapes[p.type]
            and (q.type == p.type or shapes[p.type] == "date")
            and rendered(p.type, q.value) != own
            and not span_states(span, q.value)
        ]
        if same_doc:
            hard.append(("swap_in_doc", p.type, rng.choice(same_doc), span))
        others = [
            v
            for v in rng.sample(
                values_by_type[p.type], min(8, len(values_by_type[p.type]))
            )
            if rendered(p.type, v) != own and not value_anchored(span, v)
        ]
        if others:
            easy.append(("swap_value", p.type, others[0], span))
        # Mostly a type whose values look alike (a place called an
        # organisation, a hearing date called a decision date): the hard case.
        alike = [t for t in types if t != p.type and shapes[t] == shapes[p.type]]
        other_types = alike if alike and rng.random() < 0.8 else types
        other_types = [t for t in other_types if t != p.type]
        if other_types:
            easy.append(("swap_type", rng.choice(other_types), p.value, span))
        foreign = [
            s
            for q, s in spans_by_doc[doc]
            if q.id != p.id
            and rendered(q.type, q.value) != own
            and not value_anchored(s, p.value)
        ]
        if foreign:
            easy.append(("swap_context", p.type, p.value, rng.choice(foreign)))
        rng.shuffle(hard)
        rng.shuffle(easy)
        count = int(negatives_per_positive) + (
            rng.random() < negatives_per_positive % 1
        )
        for _ in range(count):
            tier = hard if hard and (not easy or rng.random() < hard_share) else easy
            if not tier:
                break
            source, type_name, value, premise = tier.pop()
            examples.append(
                Example(
                    premise,
                    hypothesis(type_name, value),
                    False,
                    doc,
                    f"silver:{source}",
                )
            )
    rng.shuffle(examples)
    return examples
