"""Reporter citations in one spelling, and which reporter volumes a set of
sources covers completely.

Briefs, opinions and databases spell the same reporter differently
(``U. S.``/``U.S.``, ``S.Ct.``/``S. Ct.``, ``AD3d``/``A.D.3d``); eyecite's
reporter database knows the variants, so every lookup goes through
:func:`citation_key`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from eyecite import get_citations
from eyecite.models import FullCaseCitation

from ...errors import InputError

_SPACES = re.compile(r"\s+")


@lru_cache(maxsize=65536)
def citation_key(citation: str) -> str:
    """``"volume Reporter page"`` in the reporter's standard spelling
    (``"561 U. S. 593"`` → ``"561 U.S. 593"``); text eyecite cannot read
    as a reporter citation comes back with its spaces normalised."""
    for c in get_citations(citation):
        if isinstance(c, FullCaseCitation) and c.groups.get("page"):
            return c.corrected_citation()
    return _SPACES.sub(" ", citation).strip()


@lru_cache(maxsize=4096)
def reporter_key(reporter: str) -> str:
    """A reporter abbreviation in its standard spelling (``"U. S."`` →
    ``"U.S."``), or as given when eyecite does not know it."""
    key = citation_key(f"1 {reporter} 1")
    parts = key.split(" ")
    if len(parts) >= 3 and parts[0] == "1" and parts[-1] == "1":
        return " ".join(parts[1:-1])
    return _SPACES.sub(" ", reporter).strip()


@dataclass(frozen=True)
class Coverage:
    """Reporter volumes the configured sources hold completely: a citation
    inside them that matches nothing does not exist; one outside them that
    matches nothing is only unverifiable.

    Read from ``"U.S.:329-579,F.3d:1-999"`` with :meth:`parse`.
    """

    volumes: tuple[tuple[str, int, int], ...] = ()

    @classmethod
    def parse(cls, spec: str) -> Coverage:
        """Coverage from ``Reporter:first-last`` items separated by commas
        (a single volume may be written ``Reporter:N``).

        Raises:
            InputError: an item is not of that form, or its range is empty.
        """
        volumes = []
        for item in filter(None, (s.strip() for s in spec.split(","))):
            reporter, sep, span = item.rpartition(":")
            m = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", span.strip())
            if not sep or not reporter.strip() or not m:
                raise InputError(
                    f"complete reporters: {item!r} is not Reporter:first-last"
                    " (e.g. U.S.:329-579)"
                )
            first, last = int(m[1]), int(m[2] or m[1])
            if last < first:
                raise InputError(f"complete reporters: {item!r} has an empty range")
            volumes.append((reporter_key(reporter.strip()), first, last))
        return cls(tuple(volumes))

    def covers(self, reporter: str, volume: str | int) -> bool:
        """Whether every case in this volume of this reporter is known."""
        try:
            v = int(volume)
        except (TypeError, ValueError):
            return False
        key = reporter_key(reporter)
        return any(r == key and a <= v <= b for r, a, b in self.volumes)

    def __str__(self) -> str:
        return ",".join(f"{r}:{a}-{b}" for r, a, b in self.volumes)


@lru_cache(maxsize=1)
def _editions() -> dict[str, bool]:
    """Each reporter edition (``F.2d``) by name: whether a later edition of
    the same reporter followed it."""
    from reporters_db import REPORTERS

    out: dict[str, bool] = {}
    for family in REPORTERS.values():
        for reporter in family:
            editions = sorted(
                reporter["editions"],
                key=lambda e: reporter["editions"][e].get("start") or datetime.min,
            )
            for i, name in enumerate(editions):
                out.setdefault(name, i + 1 < len(editions))
    return out


# A series followed by a later one stopped at volume 999 (F.2d, A.2d...).
_LAST_VOLUME_OF_SUPERSEDED = 999


def implausible(reporter: str, volume: str) -> str | None:
    """Why a citation to ``volume`` of ``reporter`` cannot exist, by the
    reporter tables: a volume past 999 of a series a later one superseded.
    None when nothing says so. (The tables' dates are too loose to judge a
    year by: U.S. "begins" in 1875, yet 60 U.S. 393 is from 1856, its early
    volumes renumbered nominative reporters.)"""
    superseded = _editions().get(reporter_key(reporter))
    if superseded and volume.isdigit() and int(volume) > _LAST_VOLUME_OF_SUPERSEDED:
        return f"{reporter} ended before volume {_LAST_VOLUME_OF_SUPERSEDED + 1}"
    return None
