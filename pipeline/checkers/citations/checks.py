"""The five checks of a citation, each a claim with its evidence.

Exists, case name, pincite and quotation are decided without a model; only
the proposition needs the scorer. A citation that matches nothing is
hallucinated only inside the reporter volumes the sources cover completely
(or when its reporter does not exist); elsewhere it is unverifiable, since
absence from our sources is not absence from the law.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, cast

from ...score import Scorer
from .names import names_match
from .pages import (
    PageRange,
    pages_overlap,
    reporter_pages,
    separate_opinion,
    slip_pages,
)
from .parse import Citation
from .passages import Passage, PassageIndex
from .quotes import OpinionWords, QuoteMatch, find_quote
from .reporters import Coverage, implausible
from .restatement import restatement
from .sources import CaseLawSource, CaseRecord, Opinion

Status = Literal["verified", "hallucinated", "unverifiable"]
PROBLEMS = (
    "no_such_case",
    "case_name_mismatch",
    "pincite_out_of_range",
    "quote_not_found",
    "proposition_not_supported",
)
# How sure each deterministic finding is that the citation is hallucinated;
# the proposition's is the scorer's.
_CONFIDENCE = {
    "no_such_case": 0.95,
    "case_name_mismatch": 0.9,
    "pincite_out_of_range": 0.8,
    "quote_not_found": 0.85,
    "proposition_not_supported": 0.85,
}
_UNVERIFIABLE_SCORE = 0.5
_VERIFIED_SCORE = 0.05
#: Opinion passages the scorer reads per proposition.
PASSAGES_PER_PROPOSITION = 3


@dataclass(frozen=True)
class Span:
    """Evidence in a source: an opinion's text (``start``/``end``), its
    syllabus (no offsets) or a case record (its name)."""

    source: str
    start: int | None
    end: int | None
    text: str


@dataclass(frozen=True)
class Check:
    """One check of one citation: ``passed`` is None when it could not be
    made (no text, no scorer, nothing to check)."""

    name: str
    passed: bool | None
    problem: str | None = None
    evidence: Span | None = None
    score: float | None = None
    detail: str = ""


@dataclass(frozen=True)
class CitationResult:
    """The verdict on a citation: ``score`` is higher the likelier it is
    hallucinated; ``evidence`` is the deciding check's; ``proposition_pair``
    is the (passage, proposition) the scorer read, for labeling and
    retraining."""

    citation: Citation
    status: Status
    problems: tuple[str, ...]
    matched: CaseRecord | None
    checks: tuple[Check, ...]
    score: float
    evidence: Span | None
    proposition_pair: tuple[str, str] | None = None


class CaseLaw:
    """The configured sources and their complete coverage, with per-opinion
    preparations (word index, passages) kept for the next citation."""

    def __init__(
        self, sources: Sequence[CaseLawSource], *, coverage: Coverage | None = None
    ):
        self.sources = list(sources)
        self.coverage = coverage or Coverage()
        self._words: dict[str, OpinionWords] = {}
        self._passages: dict[str, PassageIndex] = {}
        self._opinions: dict[tuple[str, str], Opinion | None] = {}

    def lookup(self, keys: Sequence[str]) -> dict[str, list[CaseRecord]]:
        """Every source's cases for each key, those with text first."""
        out: dict[str, list[CaseRecord]] = {k: [] for k in keys}
        for source in self.sources:
            for key, records in source.lookup(list(out)).items():
                out[key] += records
        return {k: sorted(v, key=lambda r: not r.has_text) for k, v in out.items()}

    def opinion(self, record: CaseRecord) -> Opinion | None:
        key = (record.source, record.id)
        if key not in self._opinions:
            source = next((s for s in self.sources if s.name == record.source), None)
            self._opinions[key] = source.opinion(record.id) if source else None
        return self._opinions[key]

    def next_case_page(self, key: str) -> int | None:
        """The first page of the case after ``key``'s in its volume, where a
        source lists the volume's cases."""
        volume, _, rest = key.partition(" ")
        reporter, _, page = rest.rpartition(" ")
        pages = [
            s.first_pages.next_after(reporter, volume, int(page))
            for s in self.sources
            if hasattr(s, "first_pages") and page.isdigit()
        ]
        pages = [p for p in pages if p is not None]
        return min(pages) if pages else None

    def later_volume(self, c: Citation) -> tuple[int, int] | None:
        """A volume of the cited reporter lower than the citation's yet
        dated two or more years after its year, where a source knows one:
        the cited volume cannot exist for that year."""
        if not (c.year and c.volume and c.reporter and c.volume.isdigit()):
            return None
        for s in self.sources:
            pages = getattr(s, "first_pages", None)
            found = (
                pages.later_volume(c.reporter, int(c.volume), int(c.year))
                if pages
                else None
            )
            if found:
                return found
        return None

    def in_volume(self, reporter: str, volume: str) -> list[CaseRecord]:
        return [
            r for s in self.sources if hasattr(s, "in_volume")
            for r in s.in_volume(reporter, volume)
        ]  # fmt: skip

    def words(self, opinion: Opinion) -> OpinionWords:
        if opinion.id not in self._words:
            self._words[opinion.id] = OpinionWords(opinion.text)
        return self._words[opinion.id]

    def passages(self, opinion: Opinion) -> PassageIndex:
        if opinion.id not in self._passages:
            self._passages[opinion.id] = PassageIndex(opinion)
        return self._passages[opinion.id]


@dataclass
class _Work:
    """A citation on its way through the checks."""

    citation: Citation
    records: list[CaseRecord] = field(default_factory=list)
    matched: CaseRecord | None = None
    opinion: Opinion | None = None
    checks: list[Check] = field(default_factory=list)
    pair: tuple[str, str] | None = None


def check_citations(
    citations: Sequence[Citation],
    caselaw: CaseLaw,
    *,
    scorer: Scorer | None = None,
) -> list[CitationResult]:
    """Check each citation against the case law.

    Args:
        citations: from :func:`~.parse.find_citations`, short forms resolved.
        caselaw: the sources and their complete coverage.
        scorer: reads (opinion passage, proposition) pairs; without one, the
            proposition check is not made.

    Returns:
        One result per citation, in order.
    """
    keys = sorted({c.key for c in citations if c.key and c.reporter_known})
    found = caselaw.lookup(keys) if keys else {}
    work = [_Work(c, records=list(found.get(c.key or "", []))) for c in citations]
    for w in work:
        _check_case(w, caselaw)
        if w.opinion is not None and not _failed(w):
            _check_quotes_and_pages(w, caselaw)
    _check_propositions([w for w in work if not _failed(w)], caselaw, scorer)
    return [_result(w) for w in work]


def _failed(w: _Work) -> bool:
    return any(c.passed is False for c in w.checks)


def _check_case(w: _Work, caselaw: CaseLaw) -> None:
    """Exists and case name: find the cited case among the records."""
    c = w.citation
    if c.key is None and c.volume and c.reporter and c.case_name:
        # A slip citation (570 U.S. ___): the volume's cases, by name.
        in_volume = caselaw.in_volume(c.reporter, c.volume)
        w.records = [r for r in in_volume if names_match(c.case_name, r.case_name)]
        if (
            not w.records
            and in_volume
            and caselaw.coverage.covers(c.reporter, c.volume)
        ):
            w.checks.append(
                Check(
                    "case_name",
                    False,
                    "case_name_mismatch",
                    detail=f"no case of {c.volume} {c.reporter}, which is known"
                    f" completely, is named {c.case_name}",
                )
            )
            return
    if not w.records:
        w.checks.append(_exists_without_match(c, caselaw))
        return
    w.checks.append(Check("exists", True, evidence=_record_span(w.records[0])))
    if c.case_name:
        named = [r for r in w.records if names_match(c.case_name, r.case_name)]
        if not named:
            record = w.records[0]
            w.matched = record
            w.checks.append(
                Check(
                    "case_name",
                    False,
                    "case_name_mismatch",
                    evidence=_record_span(record),
                    detail=f"{c.key} is {record.case_name}",
                )
            )
            return
        w.records = named
        w.checks.append(Check("case_name", True, evidence=_record_span(named[0])))
    w.matched = w.records[0]
    if w.matched.has_text:
        w.opinion = caselaw.opinion(w.matched)


def _exists_without_match(c: Citation, caselaw: CaseLaw) -> Check:
    if not c.reporter_known:
        return Check(
            "exists",
            False,
            "no_such_case",
            detail=f"no reporter is called {c.reporter!r}",
        )
    if c.reporter and c.volume:
        why = implausible(c.reporter, c.volume)
        if why:
            return Check("exists", False, "no_such_case", detail=why)
    later = caselaw.later_volume(c)
    if later:
        return Check(
            "exists",
            False,
            "no_such_case",
            detail=f"volume {c.volume} of {c.reporter} cannot be from {c.year}:"
            f" volume {later[0]} is from {later[1]}",
        )
    if (
        c.key
        and c.reporter
        and c.volume
        and caselaw.coverage.covers(c.reporter, c.volume)
    ):
        if caselaw.next_case_page(c.key) is None:
            # Past the volume's last decided case come the orders (cert.
            # denied), in-chambers opinions and summary dispositions, which
            # no index lists: every "no such case" of that kind among the
            # real-briefs dev flags was one (amicus_corpus:sAP03, 404 U.S.
            # 1215 in chambers; cert. denials at 529 U.S. 1019, 532 U.S. 1051).
            return Check(
                "exists",
                None,
                detail=f"{c.key} is past the last decided case of {c.volume}"
                f" {c.reporter}, where orders and in-chambers opinions are"
                " printed, which the sources do not list",
            )
        return Check(
            "exists",
            False,
            "no_such_case",
            detail=f"no case starts at {c.key}, though every case of"
            f" {c.volume} {c.reporter} is known",
        )
    return Check("exists", None, detail="not in the sources, which do not cover it")


def _record_span(record: CaseRecord) -> Span:
    cites = ", ".join(record.citations[:2])
    return Span(record.id, None, None, f"{record.case_name}, {cites}")


def _pages(w: _Work, caselaw: CaseLaw) -> PageRange | None:
    c = w.citation
    if c.pincite is None:
        return None
    if c.pincite.slip:
        lead_only = not separate_opinion(c.text)
        return slip_pages(w.opinion, lead_only=lead_only) if w.opinion else None
    if not c.key:
        return None
    nxt = caselaw.next_case_page(c.key)
    if w.opinion is None:
        return PageRange(first=int(c.page), last=nxt) if c.page else None
    return reporter_pages(w.opinion, c.key, next_case_page=nxt)


def _check_quotes_and_pages(w: _Work, caselaw: CaseLaw) -> None:
    """The quotation must be in the opinion; the pincite inside its pages,
    and on the page the quotation is on where the pages are marked."""
    opinion = w.opinion
    assert opinion is not None  # the caller checks only a case with its opinion
    found: list[QuoteMatch] = []
    for q in w.citation.quotes:
        m = find_quote(caselaw.words(opinion), q.text)
        span = _opinion_span(opinion, m)
        if not m.exact:
            w.checks.append(
                Check("quote", False, "quote_not_found", evidence=span,
                      detail=f"not in {opinion.case_name}; closest passage shown")
            )  # fmt: skip
            return
        found.append(m)
        w.checks.append(Check("quote", True, evidence=span))
    _check_pincite(w, caselaw, found)


def _check_pincite(w: _Work, caselaw: CaseLaw, quotes: list[QuoteMatch]) -> None:
    pin = w.citation.pincite
    pages = _pages(w, caselaw)
    if pin is None or pages is None:
        return
    inside = pages.contains(pin.first, pin.last)
    where = "slip op." if pin.slip else "page"
    if inside is False:
        last = "?" if pages.last is None else pages.last
        w.checks.append(
            Check("pincite", False, "pincite_out_of_range",
                  detail=f"{where} {pin.text} is outside {pages.first}-{last}")
        )  # fmt: skip
        return
    for m in quotes:
        assert m.start is not None and m.end is not None  # exact matches only
        a, b = pages.page_at(m.start), pages.page_at(max(m.start, m.end - 1))
        if a is None or b is None or not pages.markers:
            continue
        if not pages_overlap(pin.first, pin.last, a, b):
            on = str(a) if a == b else f"{a}-{b}"
            assert w.opinion is not None  # the quotations were found in it
            w.checks.append(
                Check("pincite", False, "pincite_out_of_range",
                      evidence=_opinion_span(w.opinion, m),
                      detail=f"the quotation is on {where} {on}, not {pin.text}")
            )  # fmt: skip
            return
    w.checks.append(Check("pincite", inside))


def _check_propositions(
    work: list[_Work], caselaw: CaseLaw, scorer: Scorer | None
) -> None:
    """Judge each proposition against the opinion's best passages: settled
    where a passage restates it or its contrary (:mod:`.restatement`), else
    scored (one batch for all citations), supported if any passage is."""
    todo = [
        w for w in work
        if w.opinion is not None and w.citation.proposition and not w.citation.quotes
    ]  # fmt: skip
    pairs: list[tuple[str, str]] = []
    owners: list[tuple[_Work, Passage]] = []
    for w in todo:
        opinion, claim = w.opinion, w.citation.proposition
        assert opinion is not None and claim is not None  # as todo selects
        passages = caselaw.passages(opinion).best(claim, k=PASSAGES_PER_PROPOSITION)
        said = {p: restatement(claim, p.text) for p in passages}
        for verdict in ("states", "contradicts"):
            p = next((p for p, v in said.items() if v == verdict), None)
            if p is not None:
                w.pair = (p.text, claim)
                ok = verdict == "states"
                problem = None if ok else "proposition_not_supported"
                detail = "the opinion states " + ("it" if ok else "the contrary")
                evidence = _passage_span(opinion, p)
                w.checks.append(
                    Check("proposition", ok, problem, evidence, detail=detail)
                )
                break
        else:
            pairs += [(p.text, claim) for p in passages]
            owners += [(w, p) for p in passages]
    if scorer is None or not pairs:
        return
    best: dict[int, tuple[float, Passage, _Work]] = {}
    for (w, p), s in zip(owners, scorer.score_pairs(pairs), strict=True):
        if id(w) not in best or s > best[id(w)][0]:
            best[id(w)] = (s, p, w)
    for s, p, w in best.values():
        opinion, claim = w.opinion, w.citation.proposition
        assert opinion is not None and claim is not None  # as todo selects
        w.pair = (p.text, claim)
        ok = s >= scorer.threshold
        w.checks.append(
            Check("proposition", ok, None if ok else "proposition_not_supported",
                  evidence=_passage_span(opinion, p), score=s)
        )  # fmt: skip


def _passage_span(opinion: Opinion, p: Passage) -> Span:
    source = f"{opinion.id}#syllabus" if p.in_syllabus else opinion.id
    return Span(source, p.start, p.end, p.text)


def _opinion_span(opinion: Opinion, m: QuoteMatch) -> Span | None:
    if m.start is None or m.end is None:
        return None
    return Span(opinion.id, m.start, m.end, opinion.text[m.start : m.end])


def _result(w: _Work) -> CitationResult:
    problems = tuple(c.problem for c in w.checks if c.problem)
    failed = [c for c in w.checks if c.passed is False]
    if failed:
        status: Status = "hallucinated"
        # A failed check names its problem.
        score = max(
            (1 - c.score) if c.score is not None else _CONFIDENCE[cast(str, c.problem)]
            for c in failed
        )
        evidence = failed[0].evidence
    else:
        made = {c.name for c in w.checks if c.passed}
        complete = (
            "exists" in made
            and (not w.citation.quotes or "quote" in made)
            and (
                not w.citation.proposition or w.citation.quotes or "proposition" in made
            )
        )
        status = "verified" if complete else "unverifiable"
        scored = [c.score for c in w.checks if c.score is not None]
        score = (1 - max(scored)) if scored else _VERIFIED_SCORE
        if status == "unverifiable":
            score = _UNVERIFIABLE_SCORE
        evidence = next((c.evidence for c in reversed(w.checks) if c.evidence), None)
    return CitationResult(
        citation=w.citation,
        status=status,
        problems=problems,
        matched=w.matched,
        checks=tuple(w.checks),
        score=round(score, 4),
        evidence=evidence,
        proposition_pair=w.pair,
    )
