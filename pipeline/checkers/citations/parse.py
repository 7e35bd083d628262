"""Case citations in a brief, each with everything it claims.

eyecite finds the citations (full, short ``561 U.S., at 365``, ``Id.``,
``supra``) and resolves short forms to the full citation they refer to; its
case names and parentheticals are unreliable across sentences, so the case
name, pincite, parentheticals, quotation and proposition are read here from
the text around each citation. A full citation eyecite cannot read because
its reporter does not exist (``446 Cal. Rptr. 4th 183``) is still found: a
made-up reporter is the plainest fabrication.
"""

from __future__ import annotations

import re
from bisect import bisect_left, insort
from dataclasses import dataclass, replace

from eyecite import get_citations, resolve_citations
from eyecite.models import (
    FullCaseCitation,
    FullJournalCitation,
    FullLawCitation,
    IdCitation,
    ShortCaseCitation,
    SupraCitation,
    UnknownCitation,
)

from .names import ABBREVIATED_WORDS
from .reporters import citation_key, reporter_key


@dataclass(frozen=True)
class Pincite:
    """The page(s) a citation points at: ``first``..``last`` of the cited
    reporter, or slip-opinion pages when ``slip`` is True."""

    text: str
    first: int
    last: int
    slip: bool = False


@dataclass(frozen=True)
class Quote:
    """A quotation the citation is given for; offsets into the brief."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Citation:
    """One case citation in a brief and what it claims.

    ``start``/``end`` run from the case name through the closing
    parenthetical (the explanatory one included). ``form`` is ``full``,
    ``short``, ``id`` or ``supra``; a short form carries the volume, reporter,
    first page and case name of the full citation it refers to
    (``refers_to``, its index in the brief's list), and its own pincite.
    ``page`` is None for a slip citation's blank (``570 U.S. ___``).
    ``reporter_known`` is False for a reporter no reporter table lists.
    """

    id: str
    brief_id: str
    start: int
    end: int
    text: str
    form: str
    case_name: str | None
    volume: str | None
    reporter: str | None
    page: str | None
    pincite: Pincite | None = None
    court: str | None = None
    year: str | None = None
    quotes: tuple[Quote, ...] = ()
    proposition: str | None = None
    refers_to: int | None = None
    reporter_known: bool = True

    @property
    def key(self) -> str | None:
        """The cited case's citation in standard spelling, or None when it
        has no first page (a slip citation) or no reporter."""
        if not (self.volume and self.reporter and self.page):
            return None
        if not self.reporter_known:
            return f"{self.volume} {self.reporter} {self.page}"
        return citation_key(f"{self.volume} {self.reporter} {self.page}")


# Words that open a citation clause and are not part of the case name.
_SIGNALS = {
    "see", "also", "cf.", "e.g.,", "e.g.", "accord", "but", "contra", "compare",
    "with", "in", "under", "as", "by", "citing", "quoting", "following",
    "id.", "supra", "infra", "the", "court", "held", "holding", "stated", "that",
    "explained", "noted", "observed", "recognized", "generally", "this", "our",
}  # fmt: skip
# Lower-case words that may sit inside a case name.
_NAME_JOINERS = {
    "of", "the", "and", "&", "for", "in", "on", "at", "ex", "rel.", "de", "la",
    "del", "du", "von", "van", "a", "an", "to", "by", "v.", "vs.", "et", "al.",
    "re", "parte", "inc.", "co.", "corp.", "ltd.", "l.l.c.", "llc",
}  # fmt: skip
_NAME_WINDOW = 240
_QUOTE_PAIRS = {"“": "”", '"': '"'}


def find_citations(text: str, *, brief_id: str = "") -> list[Citation]:
    """The case citations of ``text`` in order, short forms resolved.

    Args:
        text: the brief.
        brief_id: stored on each citation; citation ids are
            ``"{brief_id}:{start}"``.
    """
    quoted = [(q.start, q.end) for q in _quoted(text, 0, len(text))]
    every = [
        c for c in get_citations(text)
        if not any(a <= c.span()[0] < b for a, b in quoted)
    ]  # fmt: skip
    found = [c for c in every if _is_case_citation(c)]
    statutes_and_articles = sorted(
        c.span()[0]
        for c in every
        if isinstance(c, FullLawCitation | FullJournalCitation | UnknownCitation)
    )
    antecedent = _antecedents(found)
    citations: list[Citation] = []
    index_of: dict[int, int] = {}
    for i, c in enumerate(found):
        parsed = _parse_one(text, c, brief_id)
        if parsed is None:
            continue
        ref = antecedent.get(i)
        if parsed.form != "full" and ref is not None and ref in index_of:
            parsed = _inherit(parsed, citations[index_of[ref]], index_of[ref])
        index_of[i] = len(citations)
        citations.append(parsed)
    citations = _resolve_ids(_resolve_by_name(_merge_unread(text, citations, brief_id)))
    citations = _drop_other_authorities(citations, statutes_and_articles)
    return _with_context(text, citations)


def _is_case_citation(c) -> bool:
    return isinstance(
        c, FullCaseCitation | ShortCaseCitation | IdCitation | SupraCitation
    )


def _antecedents(found: list) -> dict[int, int]:
    """Index of the citation each short form refers to: Id. to the one
    before it; a short form or supra to the last full citation of its case
    by eyecite's resolution (volume and reporter, or party name), preferring
    one whose name holds the short form's party."""
    resolved = resolve_citations(found)
    position = {id(c): i for i, c in enumerate(found)}
    out: dict[int, int] = {}
    for group in resolved.values():
        members = sorted(position[id(c)] for c in group if id(c) in position)
        fulls = [i for i in members if isinstance(found[i], FullCaseCitation)]
        for i in members:
            c = found[i]
            if isinstance(c, FullCaseCitation | IdCitation):
                continue
            before = [f for f in fulls if f < i]
            guess = (getattr(c.metadata, "antecedent_guess", None) or "").lower()
            named = [
                f for f in before if guess and guess in found[f].matched_text().lower()
            ]
            if named or before:
                out[i] = (named or before)[-1]
    for i, c in enumerate(found):
        if isinstance(c, IdCitation) and i > 0:
            out[i] = i - 1
    return out


def _parse_one(text: str, c, brief_id: str) -> Citation | None:
    core_start, core_end = c.span()
    if isinstance(c, IdCitation):
        start, form = core_start, "id"
        name = None
    elif isinstance(c, SupraCitation):
        form = "supra"
        name, start = _name_before(text, core_start, short=True)
        if name is None:
            name, start = c.metadata.antecedent_guess, c.full_span()[0]
    elif isinstance(c, ShortCaseCitation):
        # No name before it ("... the Constitution. 438 U.S. at 311"): the
        # case comes from the citation it resolves to, never from eyecite's
        # guess at the word before, which reads "Constitution." as the
        # name (real-briefs dev amicus_corpus:sAR46, sAR02, sAR19, sAR37).
        form = "short"
        name, start = _name_before(text, core_start, short=True)
        if name is None:
            start = core_start
    else:
        form = "full"
        name, start = _name_before(text, core_start)
        if name is None:
            start = core_start
    end, pincite, court, year = _tail(text, core_end, c, form)
    if form == "supra" and end == core_end and text[end - 1] == ".":
        end -= 1  # "supra." ends the sentence
    groups = c.groups if form in ("full", "short") else {}
    reporter = groups.get("reporter")
    page = groups.get("page") if form == "full" else None
    return _citation(
        text,
        brief_id,
        start,
        end,
        form=form,
        case_name=name,
        volume=groups.get("volume"),
        reporter=reporter_key(reporter) if reporter else None,
        page=page if page and page.isdigit() else None,
        pincite=pincite,
        court=court,
        year=year,
    )


def _inherit(short: Citation, full: Citation, ref: int) -> Citation:
    return replace(
        short,
        case_name=full.case_name
        if short.form == "id"
        else short.case_name or full.case_name,
        volume=full.volume,
        reporter=full.reporter,
        page=full.page,
        court=full.court,
        year=full.year,
        refers_to=ref,
        reporter_known=full.reporter_known,
    )


# --- case name -------------------------------------------------------------

_TOKEN = re.compile(r"\S+")


def _name_before(text: str, pos: int, *, short: bool = False):
    """The case name ending just before ``pos`` (the volume), and where it
    starts: words walked back from the comma until a signal, a sentence end,
    a quotation or a lower-case word that cannot sit in a name."""
    lo = max(0, pos - _NAME_WINDOW)
    stripped = text[lo:pos].rstrip()
    if not stripped.endswith(","):
        return None, pos
    kept: list[re.Match] = []
    tokens = list(_TOKEN.finditer(stripped[:-1]))
    for n, tok in reversed(list(enumerate(tokens))):
        word = tok.group()
        if _STAR_PAGE.fullmatch(word):
            continue
        bare = word.strip("“”\"'‘’()[]*_,;")
        lower = bare.lower()
        if not bare or word[-1] in '”"’' or "(" in word or ")" in word:
            break
        if word[0] in '“"‘':
            break
        if bare.isdigit() and n > 0 and tokens[n - 1].group().lower() == "at":
            break  # "..., 476 U.S. at 277, and Palmore v. Sidoti"
        if kept and lower not in _NAME_JOINERS and _ends_sentence(word):
            break
        in_re = lower == "in" and kept and kept[-1].group().lower() in ("re", "re,")
        if lower in _SIGNALS and not in_re:
            break
        initial = len(bare.rstrip(".")) == 1 and word.endswith(".")  # "S. p. A."
        if not (
            bare[0].isupper() or bare[0].isdigit() or initial or lower in _NAME_JOINERS
        ):
            break
        kept.append(tok)
        if short and len(kept) >= 6:
            break
    while kept and (
        kept[-1].group().lower() in _NAME_JOINERS - {"in", "ex"}
        or _SENTENCE_ADVERB.fullmatch(kept[-1].group())
    ):
        kept.pop()
    if not kept:
        return None, pos
    first = kept[-1]
    name = _STAR_PAGE.sub("", stripped[first.start() : -1])
    return " ".join(name.split()), lo + first.start()


# What a name walked back over leaves out (real-briefs dev flags): a star
# page marker inside it ("Green v. County [*22] School Board",
# amicus_corpus:sAR46), and an adverb opening the sentence ("Certainly,
# Brown v. Bd. of Educ.", amicus_corpus:sAR34). The walk stops at a
# parenthesis ("(opinion of Powell, J.)(quoting Keyishian v. ...",
# amicus_corpus:sAR81) and at another citation's pincite ("at 11,",
# amicus_corpus:sAR59 and sAR62).
_STAR_PAGE = re.compile(r"\[\*+\d+\]")
_SENTENCE_ADVERB = re.compile(r"[A-Z][a-z]+ly,")


# Periods that end a word inside a case name: a Bluebook abbreviation
# (``Co.``, ``Tex.``, ``Univ.``), an initial (``J.``) or a dotted acronym
# (``U.S.``); any other word with a period ends a sentence (``Then.``).
_INITIALS = re.compile(r"^(?:[A-Za-z]\.)+$|^[\w]+['’][\w]*\.?$")


def _ends_sentence(word: str) -> bool:
    """Whether a word walked back over ends the sentence before the name
    (``decision.``), as opposed to an abbreviation inside it (``Co.``)."""
    w = word.rstrip(",")
    if w.endswith(";"):
        return True
    core = w.rstrip('”"’')
    if not core.endswith((".", "?", "!")):
        return False
    return not (_INITIALS.match(core) or core.lower().rstrip(".") in ABBREVIATED_WORDS)


# --- pincite and parentheticals -------------------------------------------

_PIN = re.compile(
    r"\s*,\s*(?:at\s+)?(?P<pin>\*?\d+(?:\s*[-–—]\s*\*?\d+)?(?:\s*,\s*\d+(?:\s*[-–—]\s*\d+)?)*)"
    r"(?:\s*(?:&|and)\s*nn?\.\s*\d+|\s*nn?\.\s*\d+(?:\s*[-–—]\s*\d+)?)?"
)
_BLANK_PIN = re.compile(r"\s*,\s*_{2,}")
_SLIP = re.compile(r"slip\s+op\.?,?\s*(?:at\s+)?(?P<pin>\d+(?:\s*[-–—]\s*\d+)?)", re.I)
_YEAR = re.compile(r"(?:^|\s)(1[6-9]\d\d|20\d\d)\)?$")
_PIN_IN_SPAN = re.compile(r"(?:at\s+)?(\*?\d+(?:\s*[-–—]\s*\*?\d+)?)\s*$")


def _tail(text: str, core_end: int, c, form: str):
    """End of the citation, its pincite, court and year: read the pincite
    after the first page, then every parenthetical that follows."""
    pos = core_end
    pin: Pincite | None = None
    if form in ("short", "id", "supra"):
        m = _PIN_IN_SPAN.search(text[c.span()[0] : core_end])
        if m and (
            form != "short" or " at " in c.matched_text() or "," in c.matched_text()
        ):
            pin = _pincite(m.group(1))
        if form in ("id", "supra") and pin is None:
            m2 = re.match(r"\s*,?\s*at\s+(\*?\d+(?:\s*[-–—]\s*\d+)?)", text[pos:])
            if m2:
                pin = _pincite(m2.group(1))
                pos += m2.end()
        # A slip citation's blank page ("at ___") before its slip pincite.
        m3 = re.match(r"\s*,?\s*(?:at\s+)?_{2,}", text[pos:])
        if m3:
            pos += m3.end()
    else:
        m = _PIN.match(text, pos)
        if m:
            pin = _pincite(m.group("pin"))
            pos = m.end()
        else:
            m = _BLANK_PIN.match(text, pos)
            if m:
                pos = m.end()
    m = re.match(
        r",?\s*slip\s+op\.?,?\s*(?:at\s+)?(\d+(?:\s*[-–—]\s*\d+)?)", text[pos:], re.I
    )
    if m:
        pin = _pincite(m.group(1), slip=True)
        pos += m.end()
    court = year = None
    while True:
        m = re.match(r"\s*\(", text[pos:])
        if not m:
            break
        open_at = pos + m.end() - 1
        close = _closing_paren(text, open_at)
        if close is None:
            break
        inner = text[open_at + 1 : close]
        slip = _SLIP.search(inner)
        y = _YEAR.search(inner.strip())
        if slip and len(inner) < 40:
            pin = _pincite(slip.group("pin"), slip=True)
        elif y and len(inner) < 60 and " that " not in inner:
            year = y.group(1)
            court = inner[: y.start()].strip(" ,") or None
        elif court is None and year is None and form == "full":
            break  # an explanatory parenthetical comes after the court/year
        pos = close + 1
        if slip is None and y is None:
            continue
    return pos, pin, court, year


def _closing_paren(text: str, open_at: int) -> int | None:
    depth = 0
    for i in range(open_at, min(len(text), open_at + 2000)):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        elif ch == "\n" and text[i + 1 : i + 2] == "\n":
            return None
    return None


def _pincite(raw: str, *, slip: bool = False) -> Pincite | None:
    nums = [int(n) for n in re.findall(r"\d+", raw.split(",")[0])]
    if not nums:
        return None
    first = nums[0]
    last = nums[1] if len(nums) > 1 else first
    if last < first:  # "601-02": the last page written short
        digits = str(last)
        last = int(str(first)[: -len(digits)] + digits)
    return Pincite(text=raw.strip(), first=first, last=max(first, last), slip=slip)


# --- what eyecite does not read ----------------------------------------------

_ORDINAL = r"\d+(?:d|th|st|rd|nd)\.?"
_REPORTER_WORD = rf"(?:[A-Z][A-Za-z.'’]*(?:{_ORDINAL})?|{_ORDINAL})"
_UNKNOWN = re.compile(
    rf"(?P<volume>\d{{1,4}})\s+(?P<reporter>[A-Z][A-Za-z.'’]*(?:{_ORDINAL})?"
    rf"(?:\s+{_REPORTER_WORD})*?)\s+(?P<page>\d{{1,5}})\b"
)
_NAME_SLIP = re.compile(r",\s+(?P<slip>slip\s+op\.?,?\s+at\s+\d+)")
# Not a reporter, though it reads like one after a "v.": a law review, whose
# article title held the "v." ("21 Whittier L. Rev. 215", real-briefs dev
# amicus_corpus:sAR58), and a database number ("2003 Ill. Cir. LEXIS 20",
# recap:gov.uscourts.cacd.648845.161.3), a real citation no table lists.
_JOURNAL = re.compile(r"\b(?:L\.\s?Rev|Rev|L\.\s?J)\.", re.I)
_DATABASE = re.compile(r"\b(?:LEXIS|WL)\b")


def _merge_unread(
    text: str, citations: list[Citation], brief_id: str
) -> list[Citation]:
    """Add the citations eyecite cannot read: a full citation to a reporter
    no table knows (``Name v. Name, 446 Cal. Rptr. 4th 183 (2019)``, the
    plainest fabrication) and its short forms, and a short form by name
    and slip page (``Bilski, slip op., at 5``)."""
    taken = [(c.start, c.end) for c in citations]
    extra: list[Citation] = []
    refers: dict[str, str] = {}  # short form's id -> its full citation's id

    def free(at: int) -> bool:
        return not any(a <= at < b for a, b in taken)

    for m in re.finditer(r"\bv\.\s", text):
        comma = text.find(",", m.end(), m.end() + 160)
        after = comma + 1 + len(text[comma + 1 :]) - len(text[comma + 1 :].lstrip())
        cm = _UNKNOWN.match(text, after) if comma >= 0 else None
        if (
            not cm
            or not free(cm.start())
            or get_citations(cm.group())
            or _JOURNAL.search(cm["reporter"])
        ):
            continue
        name, start = _name_before(text, cm.start())
        if name is None:
            continue
        c = _unread_citation(
            text, brief_id, start, cm, name=name, form="full", known=_known(cm)
        )
        extra.append(c)
        taken.append((c.start, c.end))
    for full in list(extra):
        # Each is a full citation read by _UNKNOWN, whose groups always match.
        assert full.volume is not None and full.reporter is not None
        short = re.compile(
            rf"{re.escape(full.volume)}\s+{re.escape(full.reporter)},?\s+at\s+(?P<page>\d+)"
        )
        for sm in short.finditer(text, full.end):
            if free(sm.start()):
                name, start = _name_before(text, sm.start(), short=True)
                c = _unread_citation(
                    text,
                    brief_id,
                    start,
                    sm,
                    name=name,
                    form="short",
                    known=full.reporter_known,
                )
                c = replace(c, case_name=name or full.case_name, page=full.page)
                extra.append(c)
                refers[c.id] = full.id
                taken.append((c.start, c.end))
    fulls = [c for c in citations + extra if c.form == "full" and c.case_name]
    for sm in _NAME_SLIP.finditer(text):
        name, start = _name_before(text, sm.start("slip"), short=True)
        earlier = [
            c for c in fulls if c.end <= sm.start() and name and _short_name_of(name, c)
        ]
        if not free(sm.start()) or not earlier:
            continue
        end, pin, _, _ = _tail(text, sm.start(), _Span(start, sm.start()), "short")
        c = replace(
            earlier[-1],
            id=f"{brief_id}:{start}",
            start=start,
            end=end,
            text=text[start:end],
            form="short",
            case_name=name,
            pincite=pin,
            quotes=(),
            proposition=None,
        )
        extra.append(c)
        refers[c.id] = earlier[-1].id
        taken.append((start, end))
    if not extra:
        return citations
    merged = sorted(citations + extra, key=lambda c: c.start)
    index = {c.id: i for i, c in enumerate(merged)}
    referent = {
        c.id: citations[c.refers_to].id for c in citations if c.refers_to is not None
    }
    referent |= refers
    return [
        replace(c, refers_to=index[referent[c.id]]) if c.id in referent else c
        for c in merged
    ]


def _resolve_ids(citations: list[Citation]) -> list[Citation]:
    """Point each ``Id.`` at the citation just before it, now that the
    citations eyecite could not read are in the list too."""
    out = list(citations)
    for i, c in enumerate(out):
        if c.form == "id" and i > 0 and c.refers_to != i - 1:
            out[i] = _inherit(c, out[i - 1], i - 1)
    return out


def _resolve_by_name(citations: list[Citation]) -> list[Citation]:
    """Point each ``supra`` at the last full citation before it whose case
    name holds the name it gives (eyecite guesses from one party word, and
    picks the wrong case when briefs cite several)."""
    out = list(citations)
    for i, c in enumerate(out):
        if c.form != "supra" or not c.case_name:
            continue
        named = [
            j for j in range(i)
            if out[j].form == "full" and _short_name_of(c.case_name, out[j])
        ]  # fmt: skip
        # Bluebook short names are the first party's: prefer those.
        first = [j for j in named if _short_name_of(c.case_name, out[j], first=True)]
        named = first or named
        if named and named[-1] != c.refers_to:
            out[i] = _inherit(c, out[named[-1]], named[-1])
    return out


def _drop_other_authorities(
    citations: list[Citation], others: list[int]
) -> list[Citation]:
    """Leave out the short forms that cite no case: a ``supra`` whose name
    names no case cited before it (a study or an article: real-briefs dev
    amicus_corpus:sAR40 "Chambers, et al., supra", amicus_corpus:sAR34),
    and an ``Id.`` whose nearest authority before it is not a case (such a
    supra, a statute, a section sign or a journal article eyecite reads, as in
    amicus_corpus:sAR49 and sAR46), with the Id.s that follow it.
    ``others`` holds where the statutes and articles start."""
    others = list(others)
    kept: list[int] = []
    for i, c in enumerate(citations):
        if c.form == "supra" and c.case_name:
            fulls = (citations[k] for k in kept if citations[k].form == "full")
            if not any(_short_name_of(c.case_name, f) for f in fulls):
                insort(others, c.start)
                continue
        if c.form == "id":
            # After the last case citation's end: a statute in its
            # parenthetical is not cited apart from it.
            last_case = citations[kept[-1]].end if kept else -1
            at = bisect_left(others, last_case)
            if at < len(others) and others[at] < c.start:
                insort(others, c.start)
                continue
        kept.append(i)
    index = {old: new for new, old in enumerate(kept)}
    return [
        replace(c, refers_to=index.get(c.refers_to)) if c.refers_to is not None else c
        for c in (citations[k] for k in kept)
    ]


def _short_name_of(name: str, full: Citation, *, first: bool = False) -> bool:
    """Whether ``name`` is a short form of the full citation's case name
    (of its first party with ``first``)."""
    words = {w.lower().strip(",.") for w in name.split()}
    full_name = full.case_name or ""
    if first:
        full_name = re.split(r"\s+vs?\.\s+", full_name)[0]
    return bool(words) and words <= {w.lower().strip(",.") for w in full_name.split()}


def _citation(text: str, brief_id: str, start: int, end: int, **fields) -> Citation:
    """The citation of ``text[start:end]`` in brief ``brief_id``."""
    return Citation(
        id=f"{brief_id}:{start}",
        brief_id=brief_id,
        start=start,
        end=end,
        text=text[start:end],
        **fields,
    )


def _known(m: re.Match) -> bool:
    """Whether an unread citation's reporter exists all the same: a database
    number, or a known reporter written with a stray period ("17 Cal. 3d.
    280", real-briefs dev amicus_corpus:sAR49)."""
    if _DATABASE.search(m["reporter"]):
        return True
    return bool(get_citations(f"{m['volume']} {m['reporter'].rstrip('.')} {m['page']}"))


def _unread_citation(
    text, brief_id, start, m, *, name, form, known: bool = False
) -> Citation:
    end, pin, court, year = _tail(text, m.end(), _Span(m.start(), m.end()), form)
    if form == "short":
        pin = _pincite(m["page"])
    if form == "full":
        volume = m["volume"]
    else:
        digits = re.match(r"\d+", m.group())
        assert digits is not None  # a short form's match starts with its volume
        volume = digits[0]
    return _citation(
        text,
        brief_id,
        start,
        end,
        form=form,
        case_name=name,
        volume=volume,
        reporter=m["reporter"] if form == "full" else _reporter_of_short(m.group()),
        page=m["page"] if form == "full" else None,
        pincite=pin,
        court=court,
        year=year,
        reporter_known=known,
    )


def _reporter_of_short(matched: str) -> str:
    return re.sub(r"^\d+\s+|,?\s+at\s+\d+$", "", matched)


class _Span:
    """Just enough of an eyecite citation for :func:`_tail`."""

    def __init__(self, start: int, end: int):
        self._span = (start, end)

    def span(self):
        return self._span

    def matched_text(self) -> str:
        return ""


# --- quotation and proposition --------------------------------------------


def _with_context(text: str, citations: list[Citation]) -> list[Citation]:
    quotes = _quotes_by_citation(text, citations)
    out = []
    prev_end = 0
    for i, c in enumerate(citations):
        next_start = citations[i + 1].start if i + 1 < len(citations) else len(text)
        proposition = _proposition_for(text, c, prev_end, next_start)
        out.append(replace(c, quotes=tuple(quotes[i]), proposition=proposition))
        prev_end = max(prev_end, c.end)
    return out


def _quotes_by_citation(text: str, citations: list[Citation]) -> list[list[Quote]]:
    """Give each quotation to the citation it supports, one citation each: a
    quotation in a citation's parenthetical is its own; one in a sentence
    with citations goes to the nearest citation before it (``In X, ..., the
    Court said “...”``), else the first after it; one in a sentence without
    a citation goes to a citation opening the next sentence (``“...” Id.``)."""
    owned: list[list[Quote]] = [[] for _ in citations]
    spans = [(c.start, c.end) for c in citations]
    sentences = [
        (_sentence_start(text, c.start), _sentence_end(text, c.end)) for c in citations
    ]
    for q in _quoted(text, 0, len(text)):
        inside = [i for i, (a, b) in enumerate(spans) if a <= q.start and q.end <= b]
        if inside:
            owned[inside[-1]].append(q)
            continue
        same = [i for i, (a, b) in enumerate(sentences) if a <= q.start and q.end <= b]
        if same:
            before = [i for i in same if spans[i][1] <= q.start]
            owned[before[-1] if before else same[0]].append(q)
            continue
        after = [i for i, (a, _) in enumerate(sentences) if a >= q.end]
        if after:
            i = after[0]
            between = text[_sentence_end(text, q.end) : sentences[i][0]]
            if not between.strip():
                owned[i].append(q)
    return owned


def _sentence_end(text: str, pos: int) -> int:
    """Where the sentence holding ``pos`` ends (after its period)."""
    m = _SENTENCE_END.search(text, pos)
    while m and not _ends_sentence(
        text[text.rfind(" ", 0, m.start()) + 1 : m.start() + 1]
    ):
        m = _SENTENCE_END.search(text, m.end())
    para = text.find("\n\n", pos)
    end = m.start() + 1 if m else len(text)
    return min(end, para) if para >= 0 else end


def _quoted(text: str, lo: int, hi: int) -> list[Quote]:
    """Quotations between ``lo`` and ``hi``: the outermost pairs of double
    quotes (curly or straight); single quotes inside are kept."""
    out = []
    i = lo
    while i < hi:
        ch = text[i]
        if ch in _QUOTE_PAIRS:
            close = _closing_quote(text, i, hi)
            if close < 0:
                break
            inner = text[i + 1 : close]
            if len(inner.split()) >= 2:
                out.append(Quote(text=inner, start=i + 1, end=close))
            i = close + 1
        else:
            i += 1
    return out


def _closing_quote(text: str, i: int, hi: int) -> int:
    """Where the quotation opened at ``i`` closes: straight quotes at the
    next one, curly quotes at the matching one (they may nest)."""
    if text[i] == '"':
        return text.find('"', i + 1, hi)
    depth = 0
    for j in range(i, hi):
        if text[j] == "“":
            depth += 1
        elif text[j] == "”":
            depth -= 1
            if depth == 0:
                return j
    return -1


_SENTENCE_END = re.compile(r"[.?!][”\"’)\]]*\s+(?=[“\"‘(\[]*[A-Z])")


def _sentence_start(text: str, pos: int) -> int:
    """Start of the sentence holding ``pos``: after the last sentence end
    before it that is not an abbreviation's period, or a paragraph break."""
    if pos <= 0:
        return 0
    lo = max(0, pos - 1500)
    start = max(lo, text.rfind("\n\n", lo, pos) + 2 if "\n\n" in text[lo:pos] else lo)
    best = start
    for m in _SENTENCE_END.finditer(text, start, pos):
        word_start = text.rfind(" ", start, m.start()) + 1
        word = text[word_start : m.start() + 1]
        if _ends_sentence(word) or word.endswith(("?", "!")):
            best = m.end()
    return best


def _proposition_for(
    text: str, c: Citation, prev_end: int, next_start: int
) -> str | None:
    """What the citation is given for: its explanatory parenthetical, else
    the sentence it stands in without it (``In X v. Y, ..., the Court held
    that ...``), else the sentence before (``Rule. X v. Y, ...``). A
    citation introduced by a signal (``See``, ``Cf.``) supports its sentence
    only indirectly (Bluebook rule 1.2): the sentence is checked only where
    it says what a court held, explained or found."""
    paren = _explanatory(text[c.start : c.end])
    if paren:
        return paren
    s = max(prev_end, _sentence_start(text, c.start))
    signalled = bool(_SIGNAL.search(text[max(s, c.start - 40) : c.start]))
    after = text[c.end : next_start]
    ends_sentence = c.text.endswith(".") or re.match(r"\s*(?:[.;]|$)", after)
    end = _SENTENCE_END.search(after)
    rest = "" if ends_sentence else (after[: end.start() + 1] if end else after)
    own = _clean(_strip_signal(text[s : c.start]) + " " + rest)
    if len(own.split()) < 4:
        prev = max(prev_end, _sentence_start(text, s - 1))
        own = _clean(text[prev:s])
    if len(own.split()) < 4 or (signalled and not _ATTRIBUTION.search(own)):
        return None
    return own


# A sentence that says what a court decided (checkable against its opinion
# even behind a "See").
_ATTRIBUTION = re.compile(
    r"\b(?:court|held|holds|holding|explained|noted|observed|concluded|recognized"
    r"|found|ruled|stated)\b",
    re.I,
)
_EXPLAIN = re.compile(
    r"\((?P<inner>(?:holding|explaining|noting|finding|recognizing|stating|concluding|observing|reasoning|describing|quoting|emphasizing|rejecting)\b[^()]*(?:\([^()]*\)[^()]*)*)\)",
    re.I,
)


def _explanatory(citation_text: str) -> str | None:
    m = _EXPLAIN.search(citation_text)
    if not m:
        return None
    inner = re.sub(r"^\w+\s+(?:that\s+)?", "", m["inner"])
    return _clean(inner)


_SIGNAL = re.compile(
    r"\b(?:[Ss]ee|[Cc]f\.|[Cc]ompare|[Cc]ontra|e\.g\.)(?:\s+(?:also|generally|e\.g\.))?,?\s*$"
)
_LEADING_SIGNAL = re.compile(
    r"(?:\b(?:[Ss]ee(?:\s+also)?|[Cc]f\.|[Aa]ccord|[Bb]ut\s+see|e\.g\.,?"
    r"|(?:[Aa]s\s+)?[Ii]n|[Uu]nder|[Aa]s\s+(?:stated|held|explained)\s+in)\s*,?\s*)+$"
)


def _strip_signal(text: str) -> str:
    return _LEADING_SIGNAL.sub("", text.rstrip()).strip(" ,;")


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" ,;").removesuffix(" .")
