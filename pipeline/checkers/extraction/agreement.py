"""What the evidence span itself states of a claim, read by pattern.

Some evidence states a field outright: a caption names the petitioner, a
line says "Argued Oct. 19, 1953. Decided Nov. 6, 1953.", "LAVINE, J." names
the author. The patterns that find fields for silver pairs
(:mod:`.patterns`) read those statements exactly; where the span states the
claimed field, agreeing or not, that settles the claim more surely than a
small scorer, which decides everything else. Reads nothing it cannot parse:
the answer is then None.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from .patterns import ROLES as _ROLE_WORDS
from .patterns import date_contradicted, date_parts, find_fields
from .silver import counter_role

_DATE_WORDS = {
    "argu": "Argument Date",
    "heard": "Argument Date",
    "decid": "Decision Date",
    "decision": "Decision Date",
    "judgment": "Decision Date",
    "fil": "Filing Date",
    "submi": "Submission Date",
}


def field_kind(type_name: str) -> str | None:
    """The pattern field a claim's type names (``Date of Decision`` ->
    ``Decision Date``, ``appellant_name`` -> ``Appellant``), or None."""
    words = re.findall(
        r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", type_name).lower()
    )
    text = " ".join(words)
    roles = [w.rstrip("s") for w in words if w.rstrip("s") in _ROLE_WORDS]
    if roles and any(w in words for w in ("counsel", "attorney", "lawyer")):
        return f"Counsel for {roles[0].capitalize()}"
    if roles:
        return roles[0].capitalize()
    if "date" in words:
        return next((k for w, k in _DATE_WORDS.items() if w in text), None)
    if "panel" in words:
        return "Panel Judge"
    if "author" in words or words in (["judge"], ["justice"]):
        return "Author Judge"
    if "docket" in words or ("case" in words and "number" in words):
        return "Docket Number"
    return None


def _fold(value: Any) -> str:
    """Lower case, no accents or punctuation, no "et al." or role words."""
    if isinstance(value, dict):
        value = value.get("last_name") or ""
    text = unicodedata.normalize("NFKD", str(value).lower())
    text = "".join(
        c if c.isalnum() else " " for c in text if not unicodedata.combining(c)
    )
    words = [w for w in text.split() if w not in ("et", "al", *_ROLE_WORDS)]
    return " ".join(words)


def _same(kind: str, stated: Any, claimed: Any) -> bool:
    if kind.endswith("Date"):
        stated_date = date_parts(stated)
        return stated_date is not None and stated_date == date_parts(claimed)
    if kind.endswith("Judge"):
        # Surnames: "ROBERT P. FRANK, Judge." is Frank.
        said, meant = _fold(stated).split(), _fold(claimed).split()
        return bool(said and meant) and said[-1] == meant[-1]
    a, b = _fold(stated), _fold(claimed)
    if kind == "Docket Number":
        return a.replace(" ", "") == b.replace(" ", "")
    return bool(a and b) and (a in b or b in a)


_NAME = r"[A-Z][\w.'’&\-]*(?:,?\s+(?:[A-Z][\w.'’&\-]*|of|the|and|de))*"
#: Statements of a field in running text, beside the caption patterns. Each
#: was written from dev items of bench/data/caselaw_claims.jsonl (the
#: ids name them) and decides no item there wrongly.
_STATEMENTS = (
    # cl-25: "<name> (wife) appeals an equitable distribution award".
    (
        "Appellant",
        re.compile(rf"^(?P<name>{_NAME})(?:\s+\([^)]*\))?\s+appeals\b", re.M),
    ),
    # cl-29 "ROBERT P. FRANK, Judge.", cl-39 "QUINN, Associate Judge.",
    # cl-45 "STAHL, Circuit Judge." (another author claimed: unsafe).
    (
        "Author Judge",
        re.compile(
            r"(?:^|\.\s*)(?P<name>[A-Z][A-Za-z'’\-]+(?:[ \t]+[A-Z][A-Za-z'’\-]+){0,3}),"
            r"?\s+(?:C\.\s*J\.|(?:Chief |Circuit |Associate |Senior )?Judge\.)",
            re.M,
        ),
    ),
)


def _statements(span: str):
    """(kind, value) of each field ``span`` states: the caption patterns of
    :func:`.patterns.find_fields` and statements in running text."""
    for kind, found, _, _ in find_fields(span):
        yield kind, found
    for kind, pattern in _STATEMENTS:
        for m in pattern.finditer(span):
            yield kind, m.group("name")


def pattern_agreement(span: str, type_name: str, value: Any) -> bool | None:
    """Whether ``span`` states the claimed field with this value (True), with
    another one, or this value in the counter role (False), or states
    nothing of it (None)."""
    if date_contradicted(span, value):
        return False
    kind = field_kind(type_name)
    if kind is None:
        return None
    stated: dict[str, list[Any]] = {}
    for found_kind, found in _statements(span):
        stated.setdefault(found_kind, []).append(found)
    own = stated.get(kind, [])
    if kind == "Argument Date":  # "Heard Oct. 6, 1994" in appellate courts
        own = own + stated.get("Hearing Date", [])
    if any(_same(kind, s, value) for s in own):
        return True
    other_role = counter_role(kind)
    if other_role and any(_same(kind, s, value) for s in stated.get(other_role, [])):
        return False
    if (
        own
        and kind in ("Author Judge", "Docket Number")
        or (own and kind.endswith("Date"))
    ):
        return False
    return None
