"""Where cited cases are looked up: one interface over a local store of
opinions, a citation index and CourtListener.

A source answers two questions: which cases does a reporter citation name
(``lookup``), and what does a case's opinion say (``opinion``). Coverage is
separate: which reporter volumes a set of sources holds *completely* is the
deployment's configuration (:class:`Coverage`), because only inside it does
"no match" mean "no such case" rather than "not in our sources".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ...errors import InputError
from ...jsonl import iter_jsonl_lines
from .reporters import citation_key


@dataclass(frozen=True)
class PageMarker:
    """Where a page of some pagination starts in an opinion's text.

    ``scheme`` is ``star`` (official reporter pages; ``reporter`` and
    ``volume`` name which, None for the opinion's first-listed citation),
    ``slip_op`` (slip-opinion pages, restarting in each ``part``) or
    ``pdf_page``/``ecf_page``.
    """

    page: str
    offset: int
    scheme: str = "star"
    reporter: str | None = None
    volume: str | None = None
    part: str | None = None


@dataclass(frozen=True)
class CaseRecord:
    """A case a source knows to exist.

    ``id`` is the source's key for it (an opinion id, a CourtListener
    cluster URL, or the citation itself for an index entry); ``citations``
    are as the source prints them; ``has_text`` says whether
    :meth:`CaseLawSource.opinion` can give its text.
    """

    id: str
    case_name: str
    citations: tuple[str, ...]
    date: str | None = None
    court: str | None = None
    has_text: bool = False
    source: str = ""


@dataclass(frozen=True)
class Opinion:
    """A case's text with its pagination. ``syllabus`` is the reporter's
    summary of the holding where the source has one (kept out of ``text``)."""

    id: str
    case_name: str
    citations: tuple[str, ...]
    text: str
    pages: tuple[PageMarker, ...] = ()
    court: str | None = None
    date: str | None = None
    syllabus: str | None = None
    first_page: int | None = None
    last_page: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def record(self, source: str) -> CaseRecord:
        """The opinion as a case ``source`` knows, its text held."""
        return CaseRecord(
            id=self.id,
            case_name=self.case_name,
            citations=self.citations,
            date=self.date,
            court=self.court,
            has_text=True,
            source=source,
        )


class CaseLawSource(Protocol):
    """What the citation check asks of a case-law source.

    ``lookup`` takes citations as :func:`~.reporters.citation_key` writes them
    (``"561 U.S. 593"``) and answers, for each, the cases it names: none (not
    in this source), one, or several (a reporter page can start more than one
    case). ``opinion`` gives a case's text by its ``CaseRecord.id``, or None
    when the source has none.
    """

    name: str

    def lookup(self, citations: Sequence[str]) -> dict[str, list[CaseRecord]]: ...

    def opinion(self, case_id: str) -> Opinion | None: ...


def _read_jsonl(path: str | Path) -> Iterable[tuple[int, dict[str, Any]]]:
    """The objects of a JSONL file, by :func:`~pipeline.jsonl.iter_jsonl_lines`;
    a source is read whole or not at all, so its first bad line raises."""
    for n, raw in iter_jsonl_lines(path):
        if isinstance(raw, InputError):
            raise raw
        if not isinstance(raw, dict):
            raise InputError("not a JSON object", path=str(path), line=n)
        yield n, raw


def opinion_from_json(raw: Mapping[str, Any]) -> Opinion:
    """An opinion from one line of the case-law JSONL (the format of the
    court-opinion corpus: ``id``, ``case_name``, ``citations``, ``text``,
    ``pages`` with offsets; ``court``, ``date``, ``syllabus``,
    ``case_name`` (null in some court documents),
    ``first_page``/``last_page`` optional).

    Raises:
        InputError: a required field is missing or of the wrong type; the
            message names it.
    """
    for name in ("id", "text"):
        if not isinstance(raw.get(name), str) or not raw[name]:
            raise InputError(f"{name!r} must be a non-empty string")
    if not isinstance(raw.get("case_name") or "", str):
        raise InputError("'case_name' must be a string or null")
    citations = raw.get("citations", [])
    if not isinstance(citations, list) or not all(
        isinstance(c, str) for c in citations
    ):
        raise InputError("'citations' must be a list of strings")
    pages = []
    for i, p in enumerate(raw.get("pages") or []):
        if not isinstance(p, dict) or not isinstance(p.get("offset"), int):
            raise InputError(f"'pages' item {i} needs an integer 'offset'")
        if p.get("page") is None:
            continue
        pages.append(
            PageMarker(
                page=str(p["page"]),
                offset=p["offset"],
                scheme=p.get("scheme") or "star",
                reporter=p.get("reporter"),
                volume=None if p.get("volume") is None else str(p["volume"]),
                part=p.get("part"),
            )
        )
    known = {"id", "case_name", "citations", "text", "pages", "court", "date"}
    known |= {"syllabus", "first_page", "last_page"}
    return Opinion(
        id=raw["id"],
        case_name=raw.get("case_name") or "",
        citations=tuple(citations),
        text=raw["text"],
        pages=tuple(sorted(pages, key=lambda p: p.offset)),
        court=raw.get("court"),
        date=raw.get("date"),
        syllabus=raw.get("syllabus") or None,
        first_page=_int_or_none(raw.get("first_page")),
        last_page=_int_or_none(raw.get("last_page")),
        extra={k: v for k, v in raw.items() if k not in known},
    )


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


class FirstPages:
    """Where and when the known cases of each reporter volume start: the
    next case's first page bounds where an opinion can end, and the years
    of the volumes tell a volume that cannot exist for its year (reporters
    number their volumes in order of publication)."""

    def __init__(self) -> None:
        self._pages: dict[tuple[str, str], list[int]] = {}
        self._years: dict[str, dict[int, int]] = {}

    def add(self, key: str, date: str | None = None) -> None:
        volume, _, rest = key.partition(" ")
        reporter, _, page = rest.rpartition(" ")
        if volume.isdigit() and page.isdigit():
            self._pages.setdefault((reporter, volume), []).append(int(page))
            if date and date[:4].isdigit():
                years = self._years.setdefault(reporter, {})
                years[int(volume)] = min(int(date[:4]), years.get(int(volume), 9999))

    def next_after(self, reporter: str, volume: str, page: int) -> int | None:
        """The first page of the next case in the volume, if one is known."""
        later = [p for p in self._pages.get((reporter, volume), ()) if p > page]
        return min(later) if later else None

    def later_volume(
        self, reporter: str, volume: int, year: int
    ) -> tuple[int, int] | None:
        """A lower volume of the reporter first dated two or more years after
        ``year`` (so ``volume`` cannot be from ``year``), as (volume, year)."""
        for v, y in self._years.get(reporter, {}).items():
            if v < volume and y >= year + 2:
                return v, y
        return None

    def keys(self, reporter: str, volume: str) -> list[str]:
        """The citations of the volume's known cases, in page order."""
        pages = sorted(set(self._pages.get((reporter, volume), ())))
        return [f"{volume} {reporter} {p}" for p in pages]


class LocalStore:
    """Opinions held locally, looked up by any of their citations.

    Build it with :meth:`read` from the case-law JSONL, or from
    :class:`Opinion` objects (the web app's store, read from Postgres).
    """

    name = "store"

    def __init__(self, opinions: Iterable[Opinion]):
        self._opinions: dict[str, Opinion] = {}
        self._by_key: dict[str, list[str]] = {}
        self.first_pages = FirstPages()
        for o in opinions:
            self._opinions[o.id] = o
            for c in o.citations:
                key = citation_key(c)
                self._by_key.setdefault(key, []).append(o.id)
                self.first_pages.add(key, o.date)

    @classmethod
    def read(cls, path: str | Path) -> LocalStore:
        """The store of a case-law JSONL file.

        Raises:
            InputError: a line is not a valid opinion (file and line named),
                or two lines share an id.
        """
        opinions: dict[str, Opinion] = {}
        for n, raw in _read_jsonl(path):
            try:
                o = opinion_from_json(raw)
            except InputError as e:
                raise InputError(str(e), path=str(path), line=n) from e
            if o.id in opinions:
                raise InputError(f"id {o.id!r} repeats", path=str(path), line=n)
            opinions[o.id] = o
        return cls(opinions.values())

    def __len__(self) -> int:
        return len(self._opinions)

    def lookup(self, citations: Sequence[str]) -> dict[str, list[CaseRecord]]:
        return {
            c: [self._opinions[i].record(self.name) for i in self._by_key.get(c, ())]
            for c in citations
        }

    def opinion(self, case_id: str) -> Opinion | None:
        return self._opinions.get(case_id)

    def in_volume(self, reporter: str, volume: str) -> list[CaseRecord]:
        """Cases of a reporter volume, for a slip citation with no first
        page (``570 U.S. ___``), matched then by name."""
        return [
            self._opinions[i].record(self.name)
            for key in self.first_pages.keys(reporter, volume)
            for i in self._by_key[key]
        ]


class CitationIndex:
    """Cases known to exist whose text is not held: ``{"citation",
    "case_name", "date"}`` lines (e.g. the U.S. Reports citation index of
    the Supreme Court Database)."""

    name = "index"

    def __init__(self, records: Iterable[CaseRecord]):
        self._by_key: dict[str, list[CaseRecord]] = {}
        self.first_pages = FirstPages()
        for r in records:
            key = citation_key(r.citations[0])
            self._by_key.setdefault(key, []).append(r)
            self.first_pages.add(key, r.date)

    @classmethod
    def read(cls, path: str | Path) -> CitationIndex:
        """The index of a JSONL file.

        Raises:
            InputError: a line lacks a ``citation`` or ``case_name`` string.
        """
        records = []
        for n, raw in _read_jsonl(path):
            cite, name = raw.get("citation"), raw.get("case_name")
            if not isinstance(cite, str) or not cite.strip():
                raise InputError(
                    "'citation' must be a non-empty string", path=str(path), line=n
                )
            if not isinstance(name, str) or not name.strip():
                raise InputError(
                    "'case_name' must be a non-empty string", path=str(path), line=n
                )
            date = raw.get("date")
            records.append(
                CaseRecord(
                    id=f"index:{cite}",
                    case_name=name,
                    citations=(cite,),
                    date=date if isinstance(date, str) else None,
                    source=cls.name,
                )
            )
        return cls(records)

    def __len__(self) -> int:
        return sum(len(v) for v in self._by_key.values())

    def lookup(self, citations: Sequence[str]) -> dict[str, list[CaseRecord]]:
        return {c: list(self._by_key.get(c, ())) for c in citations}

    def in_volume(self, reporter: str, volume: str) -> list[CaseRecord]:
        """The index's cases of a reporter volume."""
        return [
            r
            for key in self.first_pages.keys(reporter, volume)
            for r in self._by_key[key]
        ]

    def opinion(self, case_id: str) -> Opinion | None:
        return None
