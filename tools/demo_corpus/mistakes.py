"""The values and contexts of unsafe claims: another value of the same
type, an invented passage, and a guard for whether a context states a value."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any, cast

from .builder import full_name, person, split_article
from .lexicon import (
    CANADIAN_ORGS,
    CITY_PROVINCES,
    COUNTRIES,
    FIRST,
    LAST,
    MEMBER_FIRST,
    MEMBER_LAST,
    NGOS,
    PARTIES,
    POLICE,
    REGIONS,
    TRIBUNALS,
    date_value,
    format_date,
)
from .spec import ENUMS, FAMILY
from .templates import HALLUCINATIONS, INVENTED_TAILS


def supports(type_: str, value: Any, context: str) -> bool:
    """Whether ``context`` plausibly states ``value`` (a cheap guard)."""
    low = context.lower()
    family = FAMILY[type_]
    if family == "date":
        return value["yyyy"] in low
    if family == "name":
        return value["last_name"].lower() in low or value["first_name"].lower() in low
    if family == "enum":
        words = (
            "public publique private privée camera huis clos open"
            if type_ == "PublicOrPrivateHearing"
            else "person personne virtual video teams zoom telephone tele face writing "
            "written record"
        )
        return any(w in low for w in words.split())
    return value.lower() in low or low in value.lower()


def _shift_date(value: dict, rng: random.Random) -> dict:
    d = date(int(value["yyyy"]), int(value["mm"] or 1), int(value["dd"] or 1))
    partial = value["dd"] is None
    moves = ["day", "month", "year", "swap"] if not partial else ["month", "year"]
    move = rng.choice(moves)
    if move == "swap" and (d.day > 12 or d.day == d.month):
        move = "day"
    if move == "day":
        d = d + timedelta(days=rng.choice((-1, 1, 1, -2, 2, 7, -10, 14)))
    elif move == "month":
        month = rng.choice([m for m in range(1, 13) if m != d.month])
        d = d.replace(month=month, day=min(d.day, 28))
    elif move == "year":
        d = d.replace(year=d.year + rng.choice((-1, 1, -2, 2, 3)), day=min(d.day, 28))
    else:
        d = d.replace(month=d.day, day=d.month)
    return date_value(d, partial=partial)


def other_value(
    type_: str, value: Any, rng: random.Random, doc_values: Sequence[Any]
) -> Any:
    """A plausible wrong value of ``type_``, sometimes another one of the document's."""
    family = FAMILY[type_]
    if family == "date":
        return _shift_date(value, rng)
    if family == "name":
        move = rng.random()
        if move < 0.4:
            return {**value, "first_name": rng.choice(MEMBER_FIRST + FIRST)}
        if move < 0.7:
            return {**value, "last_name": rng.choice(MEMBER_LAST + LAST)}
        return person(rng, MEMBER_FIRST, MEMBER_LAST)
    if family == "enum":
        return rng.choice([v for v in ENUMS[type_] if v != value])
    others = [v for v in doc_values if isinstance(v, str) and v != value]
    if others and rng.random() < 0.4:
        return rng.choice(others)
    if type_ in ("GPE", "City"):
        pool = [c.name for c in COUNTRIES] + list(COUNTRIES[0].cities)
        pool += [o.city for o in REGIONS] + [o.province for o in REGIONS]
        if type_ == "City":
            pool = [c for c, _ in CITY_PROVINCES]
        return rng.choice(pool)
    bank = NGOS + POLICE + PARTIES + CANADIAN_ORGS
    if type_ == "Tribunal":
        bank = tuple(name for t in TRIBUNALS for name in (t.tribunal, t.section))
    return split_article(rng.choice(bank))[1]


def hallucinate(type_: str, value: Any, rng: random.Random) -> tuple[Any, str]:
    """A value (now and then a wrong one) and an invented context stating it."""
    if rng.random() < 0.3:
        value = other_value(type_, value, rng, ())
    family = FAMILY[type_]
    options = HALLUCINATIONS[type_]
    if family == "enum":
        return value, rng.choice(cast("dict[str, tuple[str, ...]]", options)[value])
    if family == "date":
        d = date(int(value["yyyy"]), int(value["mm"] or 1), int(value["dd"] or 1))
        fmt = "month" if value["dd"] is None else rng.choice(("us", "uk", "iso"))
        shown = format_date(d, fmt)
    elif family == "name":
        shown = full_name(value)
    else:
        shown = value
    context = rng.choice(cast("tuple[str, ...]", options)).format(v=shown)
    # An invented frame around a long real name would still align: keep the
    # invented words the larger part, as in a real hallucinated passage.
    tails = list(INVENTED_TAILS)
    rng.shuffle(tails)
    while len(shown) > 0.3 * len(context) and tails:
        context += tails.pop()
    return value, context
