"""Fields found by pattern in raw text: silver material from documents that
have no claims yet.

A scorer learns "does this span support this typed value" from silver pairs,
and silver pairs need typed values anchored in real text. Claims give
them, but a new project has few and a base scorer meant to travel needs many
document styles. Dates in the common formats, the parties of a caption with
their roles, judges (authors, panels, joining lists), courts and docket
numbers can be found in most decisions by pattern alone; what is found is
right by construction, so it makes clean positives and, beside its
neighbours, the hard negatives (the other party, the other judge, the other
date).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

from ...types import Alignment, Claim, Document

MONTHS = (
    "January February March April May June July August September October "
    "November December"
).split()
_MONTH_NUMBER = {m.lower(): i for i, m in enumerate(MONTHS, 1)}
_MONTH_NUMBER.update({m[:3].lower(): i for i, m in enumerate(MONTHS, 1)})
_MONTH_NUMBER["sept"] = 9
_MONTH = r"(?P<month>(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)[a-z]*\.?)"
_DATE_PATTERNS = (
    re.compile(rf"\b{_MONTH}\s+(?P<day>\d{{1,2}}),\s*(?P<year>(?:1[89]|20)\d\d)\b"),
    re.compile(
        rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH}\s+(?P<year>(?:1[89]|20)\d\d)\b"
    ),
    re.compile(r"\b(?P<year>(?:1[89]|20)\d\d)-(?P<mm>\d\d)-(?P<day>\d\d)\b"),
    re.compile(r"\b(?P<mm>\d{1,2})/(?P<day>\d{1,2})/(?P<year>(?:1[89]|20)\d\d)\b"),
)
#: The word before a date names what the date is.
_DATE_KINDS = {
    "argued": "Argument Date",
    "submitted": "Submission Date",
    "decided": "Decision Date",
    "filed": "Filing Date",
    "heard": "Hearing Date",
    "dated": "Date",
    "released": "Release Date",
    "delivered": "Decision Date",
}
ROLES = (
    "petitioner respondent appellant appellee plaintiff defendant applicant "
    "claimant intervenor"
).split()
_CAPTION_WORD = r"(?:[A-Z][\w.'&\-]*|of|the|and|de|la|et al\.?)"
#: "MOHAMED ALI SAMANTAR, PETITIONER": the role word in capitals or
#: capitalised, as captions write it (body text says "the petitioner").
_ROLE = re.compile(
    rf"(?P<name>{_CAPTION_WORD}(?:[ ,]+{_CAPTION_WORD}){{0,12}}),\s+(?P<role>"
    + "|".join(rf"{r.upper()}S?|{r.capitalize()}s?" for r in ROLES)
    + r")\b"
)
#: The party after "v." in "X, PETITIONER v. Y ON WRIT...": the other role.
_OPPOSITE = {
    "petitioner": "Respondent",
    "appellant": "Appellee",
    "plaintiff": "Defendant",
}
_OTHER_PARTY = re.compile(
    r"\b(?P<role>PETITIONERS?|APPELLANTS?|PLAINTIFFS?)\s+v\.\s+"
    r"(?P<name>[A-Z][A-Z.'&\- ]{2,60}?(?:,? ET AL\.)?)"
    r"(?=\s+ON\s|\s*,\s*[A-Z]|\s*\n\s*\n|\s*$)"
)
_COUNSEL = re.compile(
    r"^(?P<name>[A-Z][\w.' \-]{3,60}?)(?:,[^\n]{0,160}?)?\s+for\s+(?:the\s+)?"
    r"(?P<role>" + "|".join(rf"{r}s?" for r in ROLES) + r")\b",
    re.M,
)
_JUSTICE = re.compile(
    r"\b(?:CHIEF\s+)?JUSTICE\s+(?P<name>[A-Z][A-Za-z'\-]+)\s+delivered\s+the\s+opinion"
)
#: "LAVINE, J." on a line of its own, or opening a numbered paragraph.
_AUTHOR_J = re.compile(
    r"^(?:¶\s*\d+\s+)?(?P<name>[A-Z][A-Za-z'’\-]{2,}),?\s+(?:C\.\s*)?J\.(?:$|\s)",
    re.M,
)
#: "O'Connor, J., delivered the opinion of the Court"
_AUTHOR_DELIVERED = re.compile(
    r"\b(?P<name>[A-Z][A-Za-z'’\-]{2,}),\s+(?:C\.\s*)?J\.,\s+delivered\s+the\s+opinion"
)
_JUDGE = r"[A-Z][A-Za-z'\-]{2,}(?:,\s*(?:C\.\s*)?J\.)?"
#: "LAVINE, PRESCOTT and WEST, Js." / "Before A, B and C, Circuit Judges."
_PANEL = re.compile(
    rf"(?P<names>{_JUDGE}(?:(?:,\s*(?:and\s+)?|\s+and\s+){_JUDGE})+),?\s+"
    r"(?:JJ|Js|Circuit Judges|Associate Judges|Judges)\b\.?"
)
_JOINED = re.compile(
    r"(?P<names>(?:[A-Z]{3,}(?:,\s*C\.\s*J\.)?,\s+(?:and\s+)?)+[A-Z]{3,}),\s+JJ\.,\s+joined"
)
_NOT_NAMES = set(
    "and before chief justice justices associate senior circuit district judge "
    "judges".split()
)
_COURT = re.compile(
    r"^(?P<court>(?:SUPREME COURT OF THE UNITED STATES|(?:[A-Z][a-z]+\s+)*"
    r"(?:Court|COURT)\s+(?:of|OF|for|FOR)\s+[A-Z][\w.,\- ]{2,60}?))\.?\s*(?:_+)?\s*$",
    re.M,
)
_DOCKET = re.compile(r"\bNos?\.\s+(?P<number>\d[\w\-–.]*\d)")


def _date(match: re.Match) -> dict[str, str] | None:
    parts = match.groupdict()
    if parts.get("month"):
        month = _MONTH_NUMBER.get(parts["month"].rstrip(".").lower()[:4]) or (
            _MONTH_NUMBER.get(parts["month"].rstrip(".").lower()[:3])
        )
    else:
        month = int(parts["mm"])
    day = int(parts["day"])
    if not month or not 1 <= month <= 12 or not 1 <= day <= 31:
        return None
    return {"yyyy": parts["year"], "mm": f"{month:02d}", "dd": f"{day:02d}"}


def find_dates(text: str) -> Iterator[tuple[int, int, dict[str, str]]]:
    """Every date in ``text`` in a common format, as (start, end, value)."""
    taken: list[tuple[int, int]] = []
    for pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            if any(s < m.end() and m.start() < e for s, e in taken):
                continue
            value = _date(m)
            if value:
                taken.append(m.span())
                yield m.start(), m.end(), value


def date_parts(value: object) -> tuple[int, int | None, int | None] | None:
    """(year, month, day) of a date value: a ``{"yyyy", "mm", "dd"}`` record
    (month and day may be missing) or a string holding one date."""
    if isinstance(value, dict):
        try:
            year = int(str(value.get("yyyy")))
        except ValueError:
            return None
        parts: list[int | None] = []
        for key in ("mm", "dd"):
            try:
                parts.append(int(str(value.get(key))))
            except ValueError:
                parts.append(None)
        return year, parts[0], parts[1]
    if isinstance(value, str):
        found = list(find_dates(value))
        if len(found) == 1:
            return date_parts(found[0][2])
    return None


def date_contradicted(span: str, value: object) -> bool:
    """Whether ``span`` gives dates and none of them is ``value``.

    A copied line with "Argued Oct. 19, 1953" does not support 1953-11-19:
    dates are compared as dates, whatever their format (a numeric day and
    month may be in either order). A span with no date it can read, or a
    value that is no date, decides nothing.
    """
    wanted = date_parts(value)
    if wanted is None:
        return False
    year, month, day = wanted
    seen = False
    for _, _, found in find_dates(span):
        seen = True
        y, m, d = int(found["yyyy"]), int(found["mm"]), int(found["dd"])
        if y != year:
            continue
        if (
            month is None
            or (m, d if day else None) == (month, day)
            or (day is not None and (d, m) == (month, day))
        ):
            return False
    return seen


def _name(text: str) -> dict[str, str | None]:
    """A person's name as the entity schema writes it; upper case (captions,
    judges' names) becomes title case as an extractor would write it."""
    words = text.split()
    if text.isupper():
        words = [w.capitalize() for w in words]
    return {
        "first_name": " ".join(words[:-1]) or None,
        "last_name": words[-1],
    }


def _tidy(text: str) -> str:
    text = " ".join(text.split()).strip(" ,.")
    return text.title() if text.isupper() and len(text) > 3 else text


def _line_around(text: str, start: int, end: int, limit: int = 200) -> tuple[int, int]:
    """The line (or blank-line block) holding text[start:end], cut at words
    to at most ``limit`` characters: what an extractor quotes as context."""
    left = text.rfind("\n", 0, start) + 1
    right = text.find("\n", end)
    right = len(text) if right == -1 else right
    if right - left > limit:
        margin = max(0, (limit - (end - start)) // 2)
        left = max(left, start - margin)
        right = min(right, end + margin)
        while left > 0 and left < start and not text[left - 1].isspace():
            left += 1
        while right < len(text) and right > end and not text[right].isspace():
            right -= 1
    return left, right


def find_fields(text: str) -> Iterator[tuple[str, object, int, int]]:
    """(type, value, start, end) of each field found."""
    for start, end, value in find_dates(text):
        before = text[max(0, start - 24) : start].lower()
        words = re.findall(r"[a-z]+", before)
        kind = next((_DATE_KINDS[w] for w in reversed(words) if w in _DATE_KINDS), None)
        if kind is None and text[max(0, start - 1) : start] == "[":
            kind = "Decision Date"
        yield kind or "Date", value, start, end
    for m in _ROLE.finditer(text[:6000]):
        # The caption's party is the last clause before the role word.
        name = re.split(r"\bv\.|\n|;|:", m.group("name"))[-1]
        name = _tidy(re.sub(r"(?i)[ ,]*\bet al\b\.?,?\s*$", "", name))
        if len(name) >= 4 and name.split()[0][:1].isupper():
            role = m.group("role").lower().rstrip("s")
            yield role.capitalize(), name, m.start("name"), m.end("role")
    for m in _OTHER_PARTY.finditer(text[:6000]):
        name = _tidy(re.sub(r",? ET AL\.$", "", " ".join(m.group("name").split())))
        if len(name) >= 4:
            role = _OPPOSITE[m.group("role").lower().rstrip("s")]
            yield role, name, m.start(), m.end()
    for m in _COUNSEL.finditer(text[:8000]):
        role = m.group("role").lower().rstrip("s").capitalize()
        yield f"Counsel for {role}", _tidy(m.group("name")), m.start(), m.end()
    for pattern in (_JUSTICE, _AUTHOR_J, _AUTHOR_DELIVERED):
        kind = "Author Judge"
        for m in pattern.finditer(text):
            yield kind, _name(m.group("name")), m.start(), m.end()
    for pattern, kind in ((_PANEL, "Panel Judge"), (_JOINED, "Joining Judge")):
        for m in pattern.finditer(text[:20000]):
            names = re.findall(r"[A-Z][A-Za-z'\-]{2,}", m.group("names"))
            for name in names:
                if name.lower() not in _NOT_NAMES:
                    yield kind, _name(name), m.start(), m.end()
    for m in _COURT.finditer(text[:6000]):
        yield "Court", _tidy(m.group("court")), m.start(), m.end("court")
    for m in _DOCKET.finditer(text[:6000]):
        yield "Docket Number", m.group("number"), m.start(), m.end()


def _widen(text: str, left: int, right: int, rng: random.Random) -> tuple[int, int]:
    """Sometimes the line before or after too, as extractors quote a caption
    or a docket line with its neighbour (under 300 characters in all)."""
    roll = rng.random()
    if roll < 0.25:
        before = text.rfind("\n", 0, max(0, left - 1))
        start = before + 1
        while start < left and text[start].isspace():
            start += 1
        if right - start <= 300:
            left = start
    elif roll < 0.5:
        after = text.find("\n", right + 1)
        end = len(text) if after == -1 else after
        while end > right and text[end - 1].isspace():
            end -= 1
        if end - left <= 300:
            right = end
    return left, right


def pattern_fields(document: Document) -> list[tuple[Claim, Alignment]]:
    """The fields found in ``document``, each with the line it sits in (or
    that line and a neighbour) as its context and, already aligned, as its
    evidence."""
    text = document.text
    rng = random.Random(document.id)
    out = []
    seen: set[tuple[str, str]] = set()
    for i, (type_name, value, start, end) in enumerate(find_fields(text)):
        key = (type_name, repr(value))
        if key in seen:
            continue
        seen.add(key)
        left, right = _widen(text, *_line_around(text, start, end), rng)
        span = text[left:right]
        claim = Claim(
            id=f"{document.id}#pattern-{i}",
            document_id=document.id,
            type=type_name,
            value=value,
            context=span,
            model="pattern",
        )
        out.append((claim, Alignment(1.0, left, right, span)))
    return out
