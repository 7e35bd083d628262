"""Which pages an opinion runs over, and on which page a passage lies.

Three paginations meet here: official-reporter star pages (``*N``,
``[100 A.3d 1006]``), slip-opinion pages (restarting in each separate
opinion) and PDF pages. Star markers in real texts are sometimes junk (a
``*7042`` in the middle of an opinion), so an opinion's pages are the run of
markers that climbs page by page from its first page, bounded by the page
the next case of the volume starts on where a source knows it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .reporters import citation_key, reporter_key
from .sources import Opinion, PageMarker

# A real reporter skips few pages between two markers of one opinion.
_MAX_STEP = 3


@dataclass(frozen=True)
class PageRange:
    """The pages ``first``..``last`` of one pagination of an opinion, and
    where each known page starts in its text (``markers``, climbing)."""

    first: int
    last: int | None
    markers: tuple[tuple[int, int], ...] = ()
    slip: bool = False

    def contains(self, first: int, last: int) -> bool | None:
        """Whether pages ``first``..``last`` lie in the range; None where
        the end of the opinion is unknown and the pages lie past its start."""
        if first < self.first:
            return False
        if self.last is None:
            return None
        return last <= self.last

    def page_at(self, offset: int) -> int | None:
        """The page on which the text at ``offset`` lies, where markers
        say."""
        page = None if not self.markers else self.first
        if self.slip and self.markers and offset < self.markers[0][1]:
            return None
        for p, at in self.markers:
            if at > offset:
                break
            page = p
        return page


def reporter_pages(
    opinion: Opinion, key: str, *, next_case_page: int | None = None
) -> PageRange | None:
    """The pages of ``opinion`` in the reporter of citation ``key``
    (``"561 U.S. 593"``), or None when the key has no first page.

    Args:
        opinion: the cited opinion.
        key: the citation, as :func:`~.reporters.citation_key` writes it.
        next_case_page: the first page of the next case in the volume, an
            upper bound on the last page.
    """
    volume, _, rest = key.partition(" ")
    reporter, _, page = rest.rpartition(" ")
    if not page.isdigit():
        return None
    first = int(page)
    markers = [m for m in opinion.pages if _marks(opinion, m, reporter, volume)]
    climbing: list[tuple[int, int]] = []
    prev = first
    for m in markers:
        if not m.page.lstrip("*").isdigit():
            continue
        p = int(m.page.lstrip("*"))
        if prev <= p <= prev + _MAX_STEP and (
            next_case_page is None or p <= next_case_page
        ):
            climbing.append((p, m.offset))
            prev = p
    # The recorded last page and the next case's first page both bound the
    # opinion, even where its text is partial (a lead opinion without the
    # dissents); without either, the last marker does.
    bounds = [next_case_page]
    if _first_listed(opinion, reporter, volume):
        bounds.append(opinion.last_page)
    last = min((b for b in bounds if b is not None), default=None)
    if last is None and climbing:
        last = climbing[-1][0]
    return PageRange(first=first, last=last, markers=tuple(climbing))


def _first_listed(opinion: Opinion, reporter: str, volume: str) -> bool:
    if not opinion.citations:
        return False
    key = citation_key(opinion.citations[0])
    return key.startswith(f"{volume} {reporter} ")


def _marks(opinion: Opinion, m: PageMarker, reporter: str, volume: str) -> bool:
    """Whether marker ``m`` is a page of this reporter volume: named markers
    say so; unnamed star markers belong to the first-listed citation."""
    if m.scheme != "star":
        return False
    if m.reporter:
        return reporter_key(m.reporter) == reporter and (m.volume in (None, volume))
    return _first_listed(opinion, reporter, volume)


def slip_pages(opinion: Opinion, *, lead_only: bool = True) -> PageRange | None:
    """The slip-opinion pages of ``opinion``, markers in text order; None
    without slip markers. A slip pincite names a page of the lead opinion
    (the Court's) unless the citation names a separate one ("Scalia, J.,
    dissenting"), so by default the range ends on the lead opinion's last
    page; with ``lead_only`` False, on the highest page of any part."""
    markers = [m for m in opinion.pages if m.scheme == "slip_op" and m.page.isdigit()]
    if not markers:
        return None
    # Part labels of real slip texts are messy ("Appendix to opinion of the
    # Court" over the majority's pages): every part that is not a separate
    # opinion counts as the lead.
    lead = (
        [m for m in markers if not separate_opinion(m.part or "")]
        if lead_only
        else markers
    )
    lead = lead or markers
    return PageRange(
        first=1,
        last=max(int(m.page) for m in lead),
        markers=tuple((int(m.page), m.offset) for m in markers),
        slip=True,
    )


def separate_opinion(text: str) -> bool:
    """Whether ``text`` (a part's label, a citation's parenthetical) names
    a separate opinion: a dissent or a concurrence."""
    label = text.lower()
    return "dissent" in label or "concurr" in label


def pages_overlap(a_first: int, a_last: int, b_first: int, b_last: int) -> bool:
    return a_first <= b_last and b_first <= a_last
