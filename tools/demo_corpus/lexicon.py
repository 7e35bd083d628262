"""Word banks and date formats the documents are written with.

The banks live in ``data/*.json`` and are read once, at import:

    places.json         countries of reference (cities, language), IRB offices,
                        more Canadian cities for the tribunal style
    names.json          given and family names of claimants and of members
    organisations.json  Canadian bodies, NGOs, police forces, parties, gangs
    claims.json         personal agents of persecution, Convention grounds
    language.json       English/French cognates (the "translation" mistake),
                        month names in both languages
    tribunals.json      IRB divisions, the held-out style's tribunals, the
                        surfaces of each hearing format

Order matters: the generator draws from these sequences by index, so editing,
adding or reordering an entry changes every corpus for every seed.
"""

from __future__ import annotations

import json
import random
from datetime import date, timedelta
from pathlib import Path
from typing import Any, NamedTuple

_DATA = Path(__file__).resolve().parent / "data"


def _load(name: str) -> dict[str, Any]:
    return json.loads((_DATA / name).read_text(encoding="utf-8"))


class Country(NamedTuple):
    name: str
    cities: tuple[str, ...]
    language: str


class Office(NamedTuple):
    """An IRB office and the letter its file numbers start with."""

    file_letter: str
    city: str
    province: str


class Division(NamedTuple):
    name: str
    name_fr: str
    abbr_fr: str
    party_label: str


class Tribunal(NamedTuple):
    """A tribunal of the held-out style and who answers its appeals."""

    tribunal: str
    section: str
    respondent: str
    code: str


_places = _load("places.json")
COUNTRIES: tuple[Country, ...] = tuple(
    Country(c["name"], tuple(c["cities"]), c["language"]) for c in _places["countries"]
)
REGIONS: tuple[Office, ...] = tuple(Office(**o) for o in _places["irb_offices"])
CITY_PROVINCES: tuple[tuple[str, str], ...] = tuple(
    (o.city, o.province) for o in REGIONS
) + tuple((c["city"], c["province"]) for c in _places["more_cities"])

_names = _load("names.json")
FIRST: tuple[str, ...] = tuple(_names["claimant_first"])
LAST: tuple[str, ...] = tuple(_names["claimant_last"])
MEMBER_FIRST: tuple[str, ...] = tuple(_names["member_first"])
MEMBER_LAST: tuple[str, ...] = tuple(_names["member_last"])

_organisations = _load("organisations.json")
CANADIAN_ORGS: tuple[str, ...] = tuple(_organisations["canadian"])
NGOS: tuple[str, ...] = tuple(_organisations["ngos"])
POLICE: tuple[str, ...] = tuple(_organisations["police"])
PARTIES: tuple[str, ...] = tuple(_organisations["parties"])
GANGS: tuple[str, ...] = tuple(_organisations["gangs"])

_claims = _load("claims.json")
PERSONAL_AGENTS: tuple[str, ...] = tuple(_claims["personal_agents"])
GROUNDS: tuple[str, ...] = tuple(_claims["grounds"])

_language = _load("language.json")
TRANSLATIONS: dict[str, str] = dict(_language["translations"])
BACK_TRANSLATIONS: dict[str, str] = {v: k for k, v in TRANSLATIONS.items()}
MONTHS: tuple[str, ...] = tuple(_language["months"])
MOIS: tuple[str, ...] = tuple(_language["mois"])

_tribunals = _load("tribunals.json")
DIVISIONS: dict[str, Division] = {
    code: Division(**d) for code, d in _tribunals["irb_divisions"].items()
}
TRIBUNALS: tuple[Tribunal, ...] = tuple(
    Tribunal(**t) for t in _tribunals["other_tribunals"]
)
FORMAT_SURFACES: dict[str, tuple[str, ...]] = {
    form: tuple(surfaces)
    for form, surfaces in _tribunals["hearing_format_surfaces"].items()
}


# --------------------------------------------------------------------------
# Dates


def date_value(d: date, *, partial: bool = False) -> dict[str, Any]:
    """``d`` as a date entity's value; ``partial`` leaves the day unknown."""
    return {
        "yyyy": f"{d.year:04d}",
        "mm": f"{d.month:02d}",
        "dd": None if partial else f"{d.day:02d}",
    }


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def format_date(d: date, fmt: str) -> str:
    """``d`` as written in a decision: ``"us"`` January 17, 2012, ``"fr"``
    17 janvier 2012, ``"month"`` January 2012, and so on."""
    month = MONTHS[d.month - 1]
    if fmt == "us":
        return f"{month} {d.day}, {d.year}"
    if fmt == "us_abbr":
        short = month if len(month) <= 4 else month[:3] + "."
        return f"{short} {d.day}, {d.year}"
    if fmt == "uk":
        return f"{d.day} {month} {d.year}"
    if fmt == "iso":
        return d.isoformat()
    if fmt == "dmy":
        return f"{d.day:02d}/{d.month:02d}/{d.year}"
    if fmt == "dotted":
        return f"{d.day:02d}.{d.month:02d}.{d.year}"
    if fmt == "fr":
        day = "1er" if d.day == 1 else str(d.day)
        return f"{day} {MOIS[d.month - 1]} {d.year}"
    if fmt == "ordinal":
        return f"the {_ordinal(d.day)} day of {month}, {d.year}"
    if fmt == "month":
        return f"{month} {d.year}"
    if fmt == "mois":
        return f"{MOIS[d.month - 1]} {d.year}"
    raise ValueError(f"unknown date format {fmt!r}")


def random_date(rng: random.Random, first_year: int, last_year: int) -> date:
    start = date(first_year, 1, 1)
    return start + timedelta(days=rng.randrange((date(last_year, 12, 31) - start).days))
