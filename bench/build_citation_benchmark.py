"""Build a legal-citation benchmark of brief-like excerpts from real opinions.

Follows the taxonomy of "Who Checks the Citations?" (LePhantomCite, Section 3.1):
real citations to opinions in ``opinions.jsonl`` (with verbatim quotations and
pincites computed from the page markers, or propositions drawn from the
syllabus), real citations whose text is absent from the store (U.S. Reports
cases of the SCDB index, a few non-U.S. cites extracted from real briefs with
eyecite: case name + cite + court/year only, never brief prose), and five
injected hallucination kinds:

- ``no_such_case``: volume/page/series changed so the citation does not exist,
- ``case_name_mismatch``: another real case's name on this case's citation,
- ``pincite_out_of_range``: a pincite outside the opinion's pages, or a page
  inside the range that the quotation is not on,
- ``quote_not_found``: one or two words of a real quotation replaced by
  near-synonyms (meaning kept, :data:`MISQUOTE_SYNONYMS`), or a quotation found
  in no opinion,
- ``proposition_not_supported``: the stated holding altered so that it is wrong
  (one phrase of :data:`FLIPS` replaced: a change of party, quantity, time,
  scope, condition, degree, standard or source of law) or taken from another
  opinion.

The two tables are this benchmark's own, written apart from the checker: no
pair is an opposite, prefix opposite or negation that the checker's
proposition rule (``citations/restatement.py``, reused by
``citations/silver.py``) knows, and no flip adds or drops a negation.

Writes ``briefs_{dev,test}.jsonl``, ``truth_{dev,test}.jsonl`` and ``README.md``
under ``--out``; deterministic for a ``--seed``.  Split by cited opinion
(hash of the opinion id, ~40% dev), absent/non-existent pools by hash of the
citation.

    .venv/bin/python bench/build_citation_benchmark.py [--seed 0]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import random
import re
import sys
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "caselaw"

KINDS = [
    "no_such_case",
    "case_name_mismatch",
    "pincite_out_of_range",
    "quote_not_found",
    "proposition_not_supported",
]
# Paper (Fig. A4): 158 / 189 / 177 / 167 / 416 of 1,107.  Content
# misrepresentation is over-weighted there by 300 LLM-holding entries; we keep
# it the largest kind but less dominant.
KIND_SHARE = {
    "no_such_case": 0.15,
    "case_name_mismatch": 0.17,
    "pincite_out_of_range": 0.17,
    "quote_not_found": 0.17,
    "proposition_not_supported": 0.34,
}
HALLUCINATION_RATE = 0.25
TARGET_INSTANCES = {"dev": 250, "test": 400}
DEV_SHARE = 0.40

# --------------------------------------------------------------------------
# small tables


# Near-synonyms for misquotations (meaning kept, wording not the opinion's).
# Written for this benchmark apart from the checker: no word here is in a
# word list of ``pipeline/checkers/citations`` (its opposites, negations,
# restatement framing words) or an auxiliary that ``perturb.negate`` flips
# (the README's "What this benchmark can and cannot show" gives the
# measured overlap).
MISQUOTE_SYNONYMS = {
    "statute": "enactment",
    "statutes": "enactments",
    "purpose": "object",
    "decision": "ruling",
    "decisions": "rulings",
    "argument": "position",
    "arguments": "positions",
    "claim": "assertion",
    "claims": "assertions",
    "meaning": "import",
    "language": "wording",
    "words": "terms",
    "important": "weighty",
    "consider": "weigh",
    "considered": "weighed",
    "considering": "weighing",
    "determine": "resolve",
    "determined": "resolved",
    "however": "nonetheless",
    "conduct": "behavior",
    "power": "authority",
    "clearly": "manifestly",
    "circumstances": "conditions",
    "context": "setting",
    "approach": "framework",
    "interest": "stake",
    "interests": "stakes",
    "establish": "prove",
    "provision": "clause",
    "provisions": "clauses",
    "protect": "shield",
    "protection": "safeguard",
    "problem": "trouble",
    "analysis": "assessment",
    "inquiry": "examination",
    "obtain": "acquire",
    "effect": "impact",
    "effects": "impacts",
    "reason": "ground",
    "reasons": "grounds",
    "moreover": "besides",
    "therefore": "hence",
    "thus": "hence",
    "difficult": "arduous",
    "ensure": "guarantee",
    "ensures": "guarantees",
    "merely": "just",
    "simply": "just",
    "basis": "foundation",
    "intent": "aim",
    "requirement": "prerequisite",
    "requirements": "prerequisites",
    "relevant": "germane",
    "principle": "tenet",
    "principles": "tenets",
    "question": "matter",
    "questions": "matters",
    "suggest": "imply",
    "suggests": "implies",
    "individual": "person",
    "individuals": "persons",
    "significant": "notable",
    "serious": "grave",
    "fundamental": "central",
    "goal": "aim",
    "entire": "complete",
    "prevent": "stop",
    "prevents": "stops",
    "assess": "evaluate",
    "necessary": "needed",
    "essential": "crucial",
    "appropriate": "suitable",
    "similar": "akin",
    "different": "divergent",
    "example": "illustration",
    "result": "consequence",
    "results": "consequences",
    "precisely": "exactly",
    "exactly": "precisely",
    "plainly": "obviously",
    "properly": "correctly",
    "rely": "depend",
    "relies": "depends",
    "relied": "depended",
    "violation": "breach",
    "emphasized": "stressed",
    "indicate": "signal",
    "indicates": "signals",
    "acknowledge": "concede",
    "acknowledged": "conceded",
    "burden": "onus",
    "remedy": "redress",
    "primary": "principal",
    "primarily": "principally",
    "obvious": "evident",
    "ordinary": "common",
    "begin": "start",
    "begins": "starts",
}

# Proposition flips: a phrase -> a replacement that makes the holding wrong
# by a change of party, decision-maker, quantity, time, place or scope,
# condition, degree, standard (of review, of proof, of intent), outcome or
# source of law. Written for this benchmark apart from the checker: no pair
# is an opposite, a prefix opposite ("un-", "in-", ...) or a negation that
# ``citations/restatement.py`` or ``citations/silver.py`` knows, and no word
# is in a checker word list; no flip adds or drops a negation. Lower-case
# keys also match capitalised at the start of the proposition; the longest
# phrase at a position wins.
FLIPS = {
    # party and decision-maker
    "petitioner": "respondent",
    "respondent": "petitioner",
    "petitioners": "respondents",
    "respondents": "petitioners",
    "employer": "employee",
    "employee": "employer",
    "employers": "employees",
    "employees": "employers",
    "debtor": "creditor",
    "creditor": "debtor",
    "debtors": "creditors",
    "creditors": "debtors",
    "the prosecution": "the defense",
    "the defense": "the prosecution",
    "the jury": "the judge",
    "a jury": "a judge",
    "the judge": "the jury",
    "the trial judge": "the jury",
    "juvenile": "adult",
    "juveniles": "adults",
    "adult": "juvenile",
    "adults": "juveniles",
    # quantity
    "at least": "at most",
    "at most": "at least",
    "all": "some",
    "all the": "some of the",
    "some": "all",
    "many": "few",
    "few": "many",
    "a few": "many",
    "two": "three",
    "three": "two",
    "four": "five",
    "five": "four",
    "minimum": "maximum",
    "maximum": "minimum",
    "higher": "lower",
    "lower": "higher",
    "greater": "lesser",
    "lesser": "greater",
    "increase": "decrease",
    "increased": "decreased",
    # time
    "prior": "subsequent",
    "subsequent": "prior",
    "earlier": "later",
    "later": "earlier",
    # place and scope
    "public": "private",
    "private": "public",
    "within": "outside",
    "outside": "within",
    "domestic": "foreign",
    "foreign": "domestic",
    "facial": "as-applied",
    "as-applied": "facial",
    "felony": "misdemeanor",
    "misdemeanor": "felony",
    # condition
    "only if": "even if",
    "even if": "only if",
    "if": "unless",
    "unless": "if",
    # degree
    "often": "rarely",
    "rarely": "often",
    "generally": "rarely",
    "substantial": "minimal",
    "substantially": "minimally",
    "significant": "negligible",
    # standard of review, of proof, of intent
    "de novo": "for abuse of discretion",
    "for abuse of discretion": "de novo",
    "for an abuse of discretion": "de novo",
    "strict scrutiny": "rational-basis review",
    "rational-basis review": "strict scrutiny",
    "plain error": "harmless error",
    "harmless error": "plain error",
    "a preponderance of the evidence": "clear and convincing evidence",
    "clear and convincing evidence": "a preponderance of the evidence",
    "knowingly": "negligently",
    "intentionally": "negligently",
    "objective": "subjective",
    "subjective": "objective",
    # outcome
    "rejected": "accepted",
    "accepted": "rejected",
    "rejects": "accepts",
    "accepts": "rejects",
    "reject": "accept",
    "accept": "reject",
    # source of law
    "First Amendment": "Fourth Amendment",
    "Second Amendment": "First Amendment",
    "Fourth Amendment": "Fifth Amendment",
    "Fifth Amendment": "Fourth Amendment",
    "Sixth Amendment": "Fifth Amendment",
    "Eighth Amendment": "Sixth Amendment",
    "Tenth Amendment": "Eleventh Amendment",
    "Eleventh Amendment": "Tenth Amendment",
    "Fourteenth Amendment": "Fifth Amendment",
    "Due Process Clause": "Equal Protection Clause",
    "Equal Protection Clause": "Due Process Clause",
    "Establishment Clause": "Free Exercise Clause",
    "Free Exercise Clause": "Establishment Clause",
    "Confrontation Clause": "Compulsory Process Clause",
    "Commerce Clause": "Spending Clause",
}

# Longest phrase first, so "only if" wins over "if" and "at least" over
# nothing shorter; a phrase is not matched inside a word or a hyphenated one.
_FLIP_RE = re.compile(
    r"(?<![\w'’-])(?:"
    + "|".join(
        re.escape(k) if k[0].isupper() else f"[{k[0]}{k[0].upper()}]{re.escape(k[1:])}"
        for k in sorted(FLIPS, key=len, reverse=True)
    )
    + r")(?![\w-])"
)

# Quotations that appear in no opinion (written for this benchmark; checked
# against the whole store at build time).
FABRICATED_QUOTES = [
    "A litigant who sleeps on a statutory right cannot later demand that the "
    "courts awaken it on his behalf",
    "The judiciary does not sit to rewrite a statute whenever its text proves "
    "inconvenient to one of the parties",
    "An agency's silence is not a license to expand its own jurisdiction by "
    "implication",
    "Procedural shortcuts, however efficient, cannot substitute for the "
    "deliberate judgment the Constitution demands",
    "Courts must be especially wary of inferring a private remedy from a "
    "provision that speaks only to the obligations of the government",
    "A rule that depends on the subjective motives of each officer would be "
    "unworkable in the field and unreviewable in the courtroom",
    "The mere possibility of prejudice does not by itself warrant the "
    "extraordinary remedy of a new trial",
    "Finality serves interests that extend well beyond the parties to a "
    "particular dispute",
    "A party may not invoke the equitable powers of a court while holding "
    "back the very facts on which equity depends",
    "Statutory silence on a question of remedy is an invitation to restraint, "
    "not to invention",
    "The burden of persuasion does not shift merely because the evidence "
    "lies peculiarly within the knowledge of one party",
    "No reasonable reading of the provision supports the sweeping exemption "
    "the petitioner now seeks",
]

FAKE_SERIES = [
    ("F.5th", "{circuit} Cir."),
    ("F. Supp. 4th", "S.D.N.Y."),
    ("Cal. Rptr. 4th", "Cal. Ct. App."),
    ("So. 4th", "Fla. Dist. Ct. App."),
    ("N.E.4th", "Ill. App. Ct."),
    ("P.4th", "Colo. App."),
    ("A.4th", "Pa. Super. Ct."),
    ("N.W.4th", "Minn. Ct. App."),
    ("S. Ct. 2d", ""),
    ("L. Ed. 3d", ""),
    ("B.R.2d", "Bankr. D. Del."),
]
# last volume that exists (roughly) for series whose volumes we push past
MAX_VOLUME = {
    "U.S.": 605,
    "A.2d": 999,
    "A.3d": 330,
    "N.E.2d": 999,
    "N.E.3d": 250,
    "N.W.2d": 999,
    "S.E.2d": 915,
    "P.3d": 560,
    "Cal.Rptr.3d": 330,
    "Cal.App.5th": 110,
    "B.R.": 670,
    "F.2d": 999,
    "F.3d": 999,
    "Cal. 3d": 54,
    "N.Y.3d": 45,
    "Conn.App.": 232,
}

COURT_ABBREV = [
    ("Supreme Court of the United States", ""),
    ("Appellate Court of Connecticut", "Conn. App. Ct."),
    ("District of Columbia Court of Appeals", "D.C."),
    ("District of Columbia Municipal Court of Appeals", "D.C. Mun. App."),
    ("Court of Appeals of Maryland", "Md."),
    ("Superior Court of New Jersey, Appellate Division", "N.J. Super. Ct. App. Div."),
    ("United States District Court, D. Puerto Rico", "D.P.R."),
    ("Court of Appeal, Second District", "Cal. Ct. App."),
    ("Court of Appeal, First District", "Cal. Ct. App."),
    ("Court of Appeals of New York", "N.Y."),
    ("Court of Appeals of Indiana", "Ind. Ct. App."),
    ("Supreme Judicial Court of Massachusetts", "Mass."),
    ("Appellate Court of Illinois", "Ill. App. Ct."),
    ("Supreme Court of Michigan", "Mich."),
    ("Court of Appeals of Michigan", "Mich. Ct. App."),
    ("Court of Appeals of Wisconsin", "Wis. Ct. App."),
    ("Supreme Court of Nebraska", "Neb."),
    ("Supreme Court of Wisconsin", "Wis."),
    ("Intermediate Court of Appeals of Hawaii", "Haw. Ct. App."),
    ("Court of Appeals of Virginia", "Va. Ct. App."),
    ("Court of Appeals of Georgia", "Ga. Ct. App."),
    ("Court of Appeals of North Carolina", "N.C. Ct. App."),
    ("Supreme Court of South Carolina", "S.C."),
    ("Supreme Court of Appeals of West Virginia", "W. Va."),
    ("Supreme Court of California", "Cal."),
    ("First Circuit", "1st Cir."),
    ("Federal Circuit", "Fed. Cir."),
    ("Ninth Circuit", "9th Cir."),
]
# official reporters whose name already tells the court (parenthetical = year)
OFFICIAL_REPORTERS = {"U.S.", "Cal. 3d", "Cal.App.5th", "N.Y.3d"}
REGIONAL_PREFERENCE = [
    "A.3d",
    "A.2d",
    "N.E.2d",
    "N.E.3d",
    "N.W.2d",
    "S.E.2d",
    "P.3d",
    "Cal.Rptr.3d",
    "B.R.",
]
GOV_PARTIES = {"United States", "State", "People", "Commonwealth", "The State"}
US_STATES = {
    "Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado",
    "Connecticut", "Delaware", "Florida", "Georgia", "Hawaii", "Idaho",
    "Illinois", "Indiana", "Iowa", "Kansas", "Kentucky", "Louisiana", "Maine",
    "Maryland", "Massachusetts", "Michigan", "Minnesota", "Mississippi",
    "Missouri", "Montana", "Nebraska", "Nevada", "New Hampshire", "New Jersey",
    "New Mexico", "New York", "North Carolina", "North Dakota", "Ohio",
    "Oklahoma", "Oregon", "Pennsylvania", "Rhode Island", "South Carolina",
    "South Dakota", "Tennessee", "Texas", "Utah", "Vermont", "Virginia",
    "Washington", "West Virginia", "Wisconsin", "Wyoming",
}  # fmt: skip

# --------------------------------------------------------------------------
# brief-register sentences (written for this benchmark)

OPENERS = [
    "The court of appeals misread the governing precedent.",
    "Respondent's position cannot be squared with settled law.",
    "Petitioner's argument rests on a misunderstanding of the governing standard.",
    "The district court correctly applied the controlling framework.",
    "This case turns on a question that has been answered before.",
    "The Government does not seriously dispute the governing principles.",
    "The decision below departs from settled precedent in at least two respects.",
    "Nothing in the record supports the reading that Respondent now advances.",
    "The governing legal principles are well established.",
    "The analysis begins, as it must, with the relevant precedent.",
    "The question presented is narrower than Petitioner suggests.",
    "Appellant's brief largely ignores the controlling authority.",
    "The panel majority's reasoning does not survive scrutiny.",
    "The trial court's ruling followed directly from binding precedent.",
]
TRANSITIONS = [
    "The same reasoning controls here.",
    "That principle disposes of Respondent's principal argument.",
    "Courts have consistently adhered to that understanding.",
    "The point is not a new one.",
    "Later decisions confirm the point.",
    "Respondent offers no persuasive reason to depart from that rule.",
    "That conclusion follows directly from the earlier reasoning.",
    "The argument fares no better on its own terms.",
    "This limitation matters here.",
    "The distinction is an important one.",
    "Petitioner's contrary reading finds no support in the case law.",
]
CLAIMS_FOR_STRING = [
    "The rule is a familiar one.",
    "Other decisions reflect the same understanding.",
    "The principle has been applied in a range of settings.",
    "Courts have repeatedly confronted similar questions.",
    "The point has been made many times.",
    "That approach is consistent with a long line of authority.",
]
CLOSERS = [
    "The judgment below should therefore be reversed.",
    "The judgment below should be affirmed.",
    "The contrary rule urged here would upset that settled understanding.",
    "Respondent's reading would render that limitation meaningless.",
    "Nothing more is required to resolve this appeal.",
    "The court below erred in concluding otherwise.",
]

# --------------------------------------------------------------------------
# text utilities

WORD_RE = re.compile(r"[A-Za-z][A-Za-z’']*")


def sha_unit(s: str) -> float:
    return int(hashlib.sha1(s.encode("utf-8")).hexdigest()[:12], 16) / 16**12


def norm(s: str) -> str:
    s = unicodedata.normalize("NFKC", s)
    s = s.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    s = re.sub(r"[^a-z0-9]+", " ", s.lower())
    return re.sub(r"\s+", " ", s).strip()


def split_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of sentences; end includes the closing period."""
    out = []
    start = 0
    for m in re.finditer(r"[.?!][”\"’)]?(?=\s+[A-Z“\"(\[])", text):
        before = text[start : m.start()]
        last = re.findall(r"[A-Za-z]+$", before)
        if last and (len(last[0]) == 1 or last[0] in _ABBREV):
            continue
        end = m.end()
        out.append((start, end))
        start = end
        while start < len(text) and text[start].isspace():
            start += 1
    if start < len(text):
        out.append((start, len(text)))
    return out


_ABBREV = {
    "v", "vs", "Co", "Corp", "Inc", "Ltd", "No", "Nos", "Mr", "Mrs", "Ms",
    "Dr", "St", "Id", "id", "cf", "Cf", "al", "etc", "Stat", "Cir", "App",
    "Supp", "Ct", "Dist", "Cal", "Ill", "Ed", "Rev", "Ann", "Assn", "Bd",
    "Dept", "Jr", "Sr", "Gen", "Comm", "Univ", "Pa", "Va", "Mass", "ed",
    "seq", "Cong", "Sess", "Reg", "Fed", "Crim", "Civ", "Proc", "art",
    "Art", "cl", "ch", "pp", "Pp", "n", "nn", "ibid", "supra", "infra",
}  # fmt: skip

_PRONOUN_START = {
    "This", "That", "It", "He", "She", "They", "These", "Those", "Such",
    "Its", "His", "Her", "Their", "We", "Our", "But", "And", "Nor", "Or",
    "So", "Yet", "Then", "Here", "There", "You", "I", "Your",
}  # fmt: skip
_LOWERABLE_START = {
    "The", "A", "An", "Each", "Every", "Any", "No", "Neither", "Both",
    "Because", "Although", "When", "Where", "If", "Under", "In", "For",
    "Absent", "Even", "While", "Since", "Only", "Once", "Unless", "Whether",
    "To", "On", "Given", "Nothing", "All", "Some", "Federal", "State",
    "Courts", "Section", "A court", "Claims", "Statutes", "Congress's",
    "As", "At", "By", "From", "Whatever", "Until",
}  # fmt: skip
_IMPERATIVE_START = {
    "Consider", "See", "Compare", "Imagine", "Suppose", "Take", "Recall",
    "Note", "Cf", "Accord", "Contrast",
}  # fmt: skip
_ROMAN = re.compile(r"^(?:[IVX]+|[A-H])$")


class Vocab:
    def __init__(self, texts: list[str]):
        self.uni: Counter[str] = Counter()
        self.exact: Counter[str] = Counter()
        self.bi: Counter[tuple[str, str]] = Counter()
        for t in texts:
            raw = WORD_RE.findall(t)
            self.exact.update(raw)
            toks = [w.lower() for w in raw]
            self.uni.update(toks)
            self.bi.update(zip(toks, toks[1:], strict=False))

    def can_lower(self, word: str) -> bool:
        """True for a capitalised common word (not a proper noun)."""
        w = word.rstrip(",;:")
        if w in _LOWERABLE_START:
            return True
        if not w[:1].isupper() or w.isupper():
            return False
        return self.exact[w.lower()] >= max(3, self.exact[w])

    def clean(self, sentence: str) -> bool:
        toks = WORD_RE.findall(sentence)
        low = [t.lower() for t in toks]
        for t in toks:
            if t.lower() == t and self.uni[t] < 2:
                return False
            if len(t) >= 2 and t.isupper() and t not in ("I",):
                return False
        for a, b in zip(low, low[1:], strict=False):
            joined = a + b
            if self.uni[joined] >= 3 and self.bi[(a, b)] <= 2:
                return False
        return True

    def repair_hyphens(self, s: str) -> str | None:
        def fix(m: re.Match) -> str:
            j = m.group(1) + m.group(2)
            return j if self.uni[j.lower()] >= 2 else m.group(0)

        s = re.sub(r"\b([A-Za-z]+)- ([a-z]+)\b", fix, s)
        if re.search(r"[A-Za-z]- [a-z]", s):
            return None
        return s


QUOTE_OK = re.compile(r"[A-Z][A-Za-z’', ;:\-—–]+[a-z]\.")
PROP_OK = re.compile(r"[A-Z][A-Za-z’', ;:\-—–§]+[a-z]\.")


def quote_candidate_ok(s: str, vocab: Vocab) -> bool:
    if not QUOTE_OK.fullmatch(s):
        return False
    n = len(s.split())
    if not (10 <= n <= 40 and 60 <= len(s) <= 240):
        return False
    first = s.split()[0].rstrip(",")
    if _ROMAN.match(first) or first in ("Opinion", "Justice", "Syllabus"):
        return False
    if "Opinion of" in s or " ’" in s or "’ " in s.replace("s’ ", ""):
        return False
    # a heading run into the sentence ("Applying the Statute We agree ...")
    if re.search(r"[A-Za-z,] (?:We|Our|It|This|These|There|In|The|That|I) ", s):
        return False
    return vocab.clean(s)


def lower_first(s: str, vocab: Vocab) -> str:
    if vocab.can_lower(s.split()[0]):
        return s[0].lower() + s[1:]
    return s


# --------------------------------------------------------------------------
# case models


@dataclass
class Sentence:
    text: str
    page: int | None  # reporter / slip page; None when unpaginated


@dataclass
class Prop:
    text: str  # declarative sentence without the final period
    page: int | None
    rank: int  # 0: a holding ("Held:" / "we hold"), 1: other statement
    source: str  # "syllabus" | "opinion"


@dataclass
class StoreCase:
    opinion_id: str
    name: str
    short: str
    cite: str  # "561 U.S. 593"
    volume: int
    reporter: str
    page: int
    year: str
    court: str  # Bluebook court abbreviation ("" for official reporters)
    mode: str  # "slip" | "star" | "nopage"
    issue: str
    first: int | None  # first page (reporter) or 1 (slip)
    last: int | None  # last page of the opinion (reporter) or last slip page
    out_floor: int | None  # smallest page surely outside the case
    quotes: list[Sentence] = field(default_factory=list)
    props: list[Prop] = field(default_factory=list)
    page_texts: dict[int, str] = field(default_factory=dict)
    split: str = ""


@dataclass
class AbsentCase:
    key: str
    name: str
    short: str
    cite: str
    volume: int
    reporter: str
    page: int
    paren: str  # "(1946)" / "(5th Cir. 1996)"
    year: str
    issue: str
    source: str  # "index" | "brief"
    split: str = ""


# --------------------------------------------------------------------------
# name handling


def clean_store_name(name: str) -> str:
    name = name.replace("&T;", "&T").replace("Corp..", "Corp.")
    name = re.sub(r"\s*\(In re [^)]*\)", "", name)
    name = re.sub(r"^The State v\.", "State v.", name)
    name = re.sub(r"\bLlc\b", "LLC", name)
    if name.isupper():
        name = name.title().replace("In Re", "In re")
    return re.sub(r"\s+", " ", name).strip()


_CORP_SUFFIX = re.compile(
    r",?\s+(?:Inc\.|Corp\.|Co\.|Ltd\.|LLC|L\. ?P\.|LP|P\. ?A\.|S\. ?A\.|N\. ?A\.|"
    r"AS|LLP|L\. L\. C\.)$"
)


def short_name(name: str) -> str:
    if name.startswith("In re "):
        return name
    sides = re.split(r"\s+v\.\s+", name, maxsplit=1)
    first = sides[0]

    def gov(x: str) -> bool:
        return x in GOV_PARTIES or x in US_STATES or x.startswith("State ")

    if len(sides) == 2 and gov(first) and not gov(sides[1]):
        first = sides[1]
    first = first.split(",")[0]
    first = _CORP_SUFFIX.sub("", first).strip()
    first = re.sub(r"\s+ex rel\..*$", "", first)
    words = first.split()
    if len(words) > 4:
        words = words[:2]
        if words[-1].lower() in ("of", "for", "the", "and"):
            words = words[:1]
    return " ".join(words)


_ORG_WORDS = {
    "CO.", "CO", "CORP.", "CORP", "INC.", "INC", "COMPANY", "COMMISSION",
    "BOARD", "UNITED", "STATES", "STATE", "CITY", "COUNTY", "DEPARTMENT",
    "DEPT.", "UNION", "ASSOCIATION", "ASSN.", "BANK", "RAILROAD", "R.",
    "SCHOOL", "DISTRICT", "UNIVERSITY", "COLLEGE", "TRUST", "INSURANCE",
    "AUTHORITY", "SERVICE", "SERVICES", "COUNCIL", "COMMITTEE", "PARTY",
    "NATIONAL", "AMERICAN", "FEDERAL", "INTERNATIONAL", "CORPORATION", "LTD.",
    "LLC", "ELECTRIC", "OIL", "GAS", "POWER", "STEEL", "MOTOR", "MOTORS",
    "CHURCH", "HOSPITAL", "TOWN", "VILLAGE", "TOWNSHIP", "PEOPLE",
    "COMMONWEALTH", "OF", "GROUP", "ENTERPRISES", "INDUSTRIES", "SYSTEMS",
    "PRODUCTS", "WORKERS", "LABOR", "BROTHERHOOD", "FUND", "PARTNERSHIP",
    "TRIBE", "NATION", "INDIANS", "AGENCY", "OFFICE", "ADMINISTRATION",
    "CLUB", "FOUNDATION", "INSTITUTE", "HOUSE", "PRESS", "TIMES", "NEWS",
    "BROADCASTING", "TELEPHONE", "TELEGRAPH", "AIRLINES", "LINES",
    "TRANSPORTATION", "COMMUNICATIONS", "FINANCE", "CREDIT", "MANUFACTURING",
    "REFINING", "MILLS", "STORES", "CHEMICAL", "PUBLISHING", "INC.,", "THE",
    "AND", "FOR", "CORPORATION,", "&", "ET", "MINES", "MINING", "COAL",
    "LUMBER", "TRANSIT", "BUS", "AUTHORITY,", "PUBLIC", "UTILITIES", "LAND",
}  # fmt: skip
_KEEP_UPPER = {
    "NAACP", "NLRB", "FCC", "SEC", "EPA", "FTC", "AFL-CIO", "CIO", "AFL",
    "FBI", "CIA", "ICC", "TVA", "FPC", "IBM", "AT&T", "RCA", "CBS", "NBC",
    "ABC", "ITT", "UAW", "CSX", "INS", "FEC", "FERC", "HUD", "BNSF", "LLC",
    "USA", "U.S.", "D.C.", "II", "III", "IV", "TV",
}  # fmt: skip
_SMALL = {"of", "the", "and", "for", "in", "on", "at", "to", "by", "de", "ex", "rel."}


def _title_word(w: str, first: bool) -> str:
    if w in _KEEP_UPPER:
        return w
    lw = w.lower()
    if not first and lw in _SMALL:
        return lw
    parts = w.split("-")
    out = []
    for p in parts:
        q = p.lower().capitalize()
        if q.startswith("Mc") and len(q) > 2:
            q = "Mc" + q[2:].capitalize()
        if q.startswith("O'") and len(q) > 2:
            q = "O'" + q[2:].capitalize()
        out.append(q)
    return "-".join(out)


def _scdb_side(side: str) -> str | None:
    side = re.split(r",| ET AL| et al| DBA | D/B/A |;|\(", side)[0].strip()
    side = re.sub(r"^THE ", "", side)
    if " AND " in side or "&" in side.split()[0:1]:
        return None
    toks = side.split()
    if not toks or len(toks) > 6:
        return None
    if any(re.search(r"\d", t) for t in toks):
        return None
    is_org = any(t in _ORG_WORDS for t in toks)
    title = " ".join(side.split()).title()
    if title in US_STATES or side in ("UNITED STATES",):
        return " ".join(_title_word(t, i == 0) for i, t in enumerate(toks))
    if not is_org and len(toks) >= 2:
        # a person only when an initial shows it ("KEYSE G. JAMA"); other
        # multi-word names are ambiguous (person or firm) and are not used
        if not any(re.fullmatch(r"[A-Z]\.", t) for t in toks[:-1]):
            return None
        toks = [t for t in toks if t not in ("JR.", "SR.", "II", "III", "IV", "JR")]
        return _title_word(toks[-1], True) if toks else None
    if len(toks) > 5:
        return None
    return " ".join(_title_word(t, i == 0) for i, t in enumerate(toks))


def scdb_short_case_name(name: str) -> str | None:
    name = re.sub(r"\s+", " ", name).strip()
    if name.upper().startswith("IN RE "):
        rest = _scdb_side(name[6:])
        return f"In re {rest}" if rest else None
    sides = re.split(r"\s+v\.\s+", name, maxsplit=1)
    if len(sides) != 2:
        return None
    a, b = _scdb_side(sides[0]), _scdb_side(sides[1])
    if not a or not b or a == b:
        return None
    return f"{a} v. {b}"


# --------------------------------------------------------------------------
# loading the store


def court_abbrev(court: str) -> str:
    for needle, abbr in COURT_ABBREV:
        if needle.lower() in (court or "").lower():
            return abbr
    return ""


def parse_cite(c: str) -> tuple[int, str, int] | None:
    m = re.fullmatch(r"(\d+) (.+?) (\d+)", c.strip())
    if not m:
        return None
    return int(m.group(1)), m.group(2), int(m.group(3))


def slip_lead_pages(rec: dict) -> list[tuple[int, int, int]]:
    """(page, start, end) of the lead opinion's slip pages (footnotes cut)."""
    pages = rec["pages"]
    text = rec["text"]
    start_i = next((i for i, p in enumerate(pages) if p.get("page") == "1"), None)
    if start_i is None:
        return []
    lead = []
    prev = 0
    for j in range(start_i, len(pages)):
        p = pages[j]
        label = p.get("page")
        if j > start_i and label == "1":
            break
        if label is None:
            nxt = pages[j + 1].get("page") if j + 1 < len(pages) else None
            if nxt is not None and nxt.isdigit() and int(nxt) == prev + 2:
                num = prev + 1
            else:
                break
        elif not label.isdigit() or int(label) != prev + 1:
            break
        else:
            num = int(label)
        end = pages[j + 1]["offset"] if j + 1 < len(pages) else len(text)
        # stop at the next part header if it falls inside this page
        hdr = text.find("\n=== ", p["offset"], end)
        if hdr != -1 and j + 1 < len(pages) and pages[j + 1].get("page") == "1":
            end = hdr
        lead.append((num, p["offset"], end))
        prev = num
    return lead


def star_segments(rec: dict, reporter: str | None) -> list[tuple[int, int, int]]:
    """(page, start, end) for official-reporter star pages of one reporter."""
    text = rec["text"]
    marks = [
        p
        for p in rec["pages"]
        if p.get("page")
        and p["page"].isdigit()
        and (reporter is None or p.get("reporter") in (None, reporter))
    ]
    body_end = len(text)
    fn = re.search(r"\n-{3,}\nFOOTNOTES:", text)
    if fn:
        body_end = fn.start()
    segs = []
    prev = None
    for i, p in enumerate(marks):
        num = int(p["page"])
        end = marks[i + 1]["offset"] if i + 1 < len(marks) else body_end
        end = min(end, body_end)
        if prev is not None and num <= prev:
            # out-of-order marker (OCR / footnote): skip this stretch
            continue
        if p["offset"] < body_end:
            segs.append((num, p["offset"], end))
        prev = num
    if rec["id"].startswith("raminass:") and marks and marks[0]["offset"] > 0:
        segs.insert(0, (int(marks[0]["page"]) - 1, 0, marks[0]["offset"]))
    return segs


def page_sentences(
    text: str, segs: list[tuple[int, int, int]], vocab: Vocab, slip: bool
) -> tuple[list[Sentence], dict[int, str]]:
    out = []
    page_texts: dict[int, str] = {}
    for num, a, b in segs:
        chunk = text[a:b]
        chunk = re.sub(r"^\[slip op\. [^\]]*\]\s*", "", chunk)
        if slip:
            cut = chunk.find("——————")
            if cut != -1:
                chunk = chunk[:cut]
        page_texts[num] = page_texts.get(num, "") + " " + chunk
        if slip and num == 1:
            continue
        flat = re.sub(r"\s+", " ", chunk)
        spans = split_sentences(flat)
        for s, e in spans[1:-1]:
            sent = flat[s:e].strip()
            if quote_candidate_ok(sent, vocab):
                out.append(Sentence(sent, num))
    return out, page_texts


_HOLD_RE = re.compile(
    r"^(?:(?:Accordingly|Therefore|Thus|For these reasons|For the foregoing "
    r"reasons|We therefore), )?[Ww]e (?:therefore |thus |also |now )?"
    r"(hold|conclude|agree) that (.+)\.$"
)


def body_props(quotes: list[Sentence]) -> list[Prop]:
    out = []
    for q in quotes:
        m = _HOLD_RE.match(q.text)
        if m:
            body = m.group(2)
            first = body.split()[0].capitalize()
            if not re.search(r"\b(we|our|us|I)\b", body) and first not in (
                _PRONOUN_START | _IMPERATIVE_START
            ):
                out.append(Prop(body, q.page, 0, "opinion"))
            continue
        if re.search(r"\b(we|We|our|Our|us|I)\b", q.text) or _PARTY_VIEW.search(q.text):
            continue
        if q.text.split()[0] in _PRONOUN_START | _IMPERATIVE_START:
            continue
        out.append(Prop(q.text[:-1], q.page, 1, "opinion"))
    return out


_DISCOURSE = re.compile(
    r"^(?:First|Second|Third|Fourth|Finally|Moreover|Thus|Accordingly|Here|"
    r"In addition|Further|Furthermore|Also|Similarly|Consequently|Nonetheless|"
    r"Nevertheless|In sum|Therefore|Instead|Rather|Indeed|Likewise|However|"
    r"Still|Yet|But|And|Hence|Then|Again|Of course|In short|To be sure), "
)


_LEGAL_REF = re.compile(
    r"(?:§+ ?|\bSection |\bsection |\bRule |\bsubsection |\bTitle |\bArticle )"
    r"[\dA-Za-z]*\d[\w()]*(?:\([\w]+\))*|\b\d+-(?:day|year|month)\b"
)
_PARTY_VIEW = re.compile(
    r"\b(?:contends?|argues?|urges?|asserts?|attempts|maintains|insists|"
    r"suggests|counters|claims)\b"
)


def syllabus_props(syllabus: str, vocab: Vocab) -> list[Prop]:
    i = syllabus.find("Held:")
    if i == -1:
        return []
    s = re.sub(r"\s+", " ", syllabus[i + 5 :])
    s = vocab.repair_hyphens(s) or s
    s = re.sub(r"\bPp?\. ?\d+[^.]*?\.(?= |$)", " ", s)
    s = re.sub(r"\s+", " ", s)
    out: list[Prop] = []
    seen = set()
    holding_next = True
    for a, b in split_sentences(s):
        sent = s[a:b].strip()
        if re.fullmatch(r"\d+\.", sent):
            holding_next = True
            continue
        rank = 0 if holding_next else 1
        holding_next = False
        sent = re.sub(r"^\((?:[a-z]|\d+|[ivx]+)\)\s+", "", sent)
        m = re.search(r"\b(?:concluded|concluding) that (.+)$", sent)
        m = m if m and ("JUSTICE" in sent or "C. J." in sent) else None
        m = m or re.search(r"\b(?:[Tt]his|The) Court (?:holds|held) that (.+)$", sent)
        if m:
            sent = m.group(1)
            sent = sent[0].upper() + sent[1:]
            rank = 0
        elif "JUSTICE" in sent or "C. J." in sent:
            continue
        sent = _DISCOURSE.sub("", sent)
        if not sent:
            continue
        sent = sent[0].upper() + sent[1:]
        if re.match(r"The judgments? (?:is|are|of) ", sent) or _PARTY_VIEW.search(sent):
            continue
        if sent.split()[0] in _PRONOUN_START | _IMPERATIVE_START:
            continue
        probe = _LEGAL_REF.sub("X", sent)
        if re.search(r"\d", probe) or not PROP_OK.fullmatch(probe):
            continue
        if not (50 <= len(sent) <= 280):
            continue
        if not vocab.clean(_LEGAL_REF.sub("", sent)):
            continue
        if norm(sent) in seen:
            continue
        seen.add(norm(sent))
        out.append(Prop(sent[:-1], None, rank, "syllabus"))
    return out


def load_store(path: Path, vocab_texts_out: list) -> list[dict]:
    recs = [json.loads(line) for line in path.open(encoding="utf-8")]
    vocab_texts_out.extend(r["text"] for r in recs)
    vocab_texts_out.extend(r.get("syllabus") or "" for r in recs)
    return recs


def build_store_cases(
    recs: list[dict], index: Index, vocab: Vocab
) -> tuple[list[StoreCase], dict[str, str]]:
    cases = []
    notes: dict[str, str] = {}
    us_in_star = {
        c
        for r in recs
        if r["id"].startswith("raminass:")
        for c in r["citations"]
        if " U.S. " in c
    }
    for r in recs:
        rid = r["id"]
        prefix = rid.split(":")[0]
        if not r.get("citations") or not r.get("case_name"):
            continue
        if prefix in ("pdf", "juriscraper", "courtlistener"):
            notes[rid] = "skipped: no usable page scheme for pincites"
            continue
        name = clean_store_name(r["case_name"])
        year = (r.get("date") or "")[:4]
        us = [c for c in r["citations"] if re.fullmatch(r"\d+ U\.S\. \d+", c)]
        if prefix in ("scotus_slip", "eyecite"):
            if not us:
                continue
            if us[0] in us_in_star:
                notes[rid] = "skipped: same case as a star-paginated record"
                continue
            vol, rep, pg = parse_cite(us[0])
            segs = slip_lead_pages(r)
            if len(segs) < 3:
                notes[rid] = "skipped: lead opinion slip pages unreadable"
                continue
            quotes, ptexts = page_sentences(r["text"], segs, vocab, slip=True)
            props = syllabus_props(r.get("syllabus") or "", vocab)
            props += body_props(quotes)
            c = StoreCase(
                rid, name, short_name(name), us[0], vol, rep, pg, year, "",
                "slip", index.issue(us[0]), 1, segs[-1][0],
                segs[-1][0] + 2, quotes, props, ptexts,
            )  # fmt: skip
            cases.append(c)
            continue
        if prefix == "raminass":
            cite = us[0]
            vol, rep, pg = parse_cite(cite)
            segs = star_segments(r, None)
            quotes, ptexts = page_sentences(r["text"], segs, vocab, slip=False)
            nxt = index.next_start(vol, pg)
            c = StoreCase(
                rid, name, short_name(name), cite, vol, rep, pg, year, "", "star",
                index.issue(cite), pg, segs[-1][0],
                nxt if nxt else segs[-1][0] + 60, quotes, body_props(quotes),
                ptexts,
            )  # fmt: skip
            cases.append(c)
            continue
        if prefix == "authorityspoke":
            cite = r["citations"][0]
            vol, rep, pg = parse_cite(cite)
            text = r["text"]
            flat = re.sub(r"\s+", " ", text[len(text) // 20 :])
            quotes = [
                Sentence(flat[a:b].strip(), None)
                for a, b in split_sentences(flat)[1:-1]
                if quote_candidate_ok(flat[a:b].strip(), vocab)
            ]
            court = court_abbrev(r["court"])
            nxt = index.next_start(vol, pg) if rep == "U.S." else None
            last = int(r["last_page"]) if r.get("last_page") else None
            first = int(r["first_page"]) if r.get("first_page") else pg
            c = StoreCase(
                rid, name, short_name(name), cite, vol, rep, pg, year,
                "" if rep in OFFICIAL_REPORTERS else court, "nopage",
                index.issue(cite), first, last,
                nxt if nxt else (last + 3 if last else None), quotes,
                body_props(quotes), {},
            )  # fmt: skip
            cases.append(c)
            continue
        if prefix in ("fastcase", "cap"):
            counts = Counter(p.get("reporter") for p in r["pages"])
            best = None
            for cite in r["citations"]:
                pc = parse_cite(cite)
                if not pc:
                    continue
                rep = pc[1]
                n = counts.get(rep, 0) if prefix == "fastcase" else len(r["pages"])
                score = (n >= 3, rep in REGIONAL_PREFERENCE, n)
                if best is None or score > best[0]:
                    best = (score, cite, pc)
            if best is None:
                continue
            _, cite, (vol, rep, pg) = best
            segs = star_segments(r, rep if prefix == "fastcase" else None)
            if not segs:
                continue
            # body starts at the first page marker (caption before it)
            quotes, ptexts = page_sentences(r["text"], segs, vocab, slip=False)
            last = int(r.get("last_page") or segs[-1][0])
            court = "" if rep in OFFICIAL_REPORTERS else court_abbrev(r["court"])
            c = StoreCase(
                rid, name, short_name(name), cite, vol, rep, pg, year, court,
                "star", "", pg, last, last + 3, quotes, body_props(quotes),
                ptexts,
            )  # fmt: skip
            cases.append(c)
    cases = [c for c in cases if c.quotes or c.props]
    return cases, notes


# --------------------------------------------------------------------------
# the SCDB index


class Index:
    def __init__(self, path: Path):
        self.rows = [json.loads(line) for line in path.open(encoding="utf-8")]
        self.starts: dict[int, list[int]] = defaultdict(list)
        self.by_cite: dict[str, list[dict]] = defaultdict(list)
        for r in self.rows:
            v, _, p = parse_cite(r["citation"])
            self.starts[v].append(p)
            self.by_cite[r["citation"]].append(r)
        for v in self.starts:
            self.starts[v] = sorted(set(self.starts[v]))

    def issue(self, cite: str) -> str:
        rows = self.by_cite.get(cite)
        return (rows[0].get("issue_area") or "") if rows else ""

    def exists(self, vol: int, page: int) -> bool:
        return f"{vol} U.S. {page}" in self.by_cite

    def next_start(self, vol: int, page: int) -> int | None:
        for p in self.starts.get(vol, []):
            if p > page:
                return p
        return None

    def mid_case_page(self, vol: int, rng: random.Random) -> int | None:
        """A page strictly inside some case of the volume (starts no case)."""
        st = self.starts.get(vol)
        if not st or len(st) < 3:
            return None
        for _ in range(20):
            i = rng.randrange(len(st) - 1)
            a, b = st[i], st[i + 1]
            if b - a >= 3:
                return rng.randint(a + 1, b - 1)
        return None


# --------------------------------------------------------------------------
# absent pools


def absent_from_index(
    index: Index, store_cites: set[str], brief_us: dict[str, str]
) -> list[AbsentCase]:
    out = []
    for cite, rows in index.by_cite.items():
        if cite in store_cites or len(rows) != 1:
            continue
        r = rows[0]
        name = scdb_short_case_name(r["case_name"])
        if not name:
            continue
        vol, rep, pg = parse_cite(cite)
        year = (r.get("date") or "")[:4]
        out.append(
            AbsentCase(
                cite,
                name,
                short_name(name),
                cite,
                vol,
                rep,
                pg,
                f"({year})",
                year,
                r.get("issue_area") or "",
                "index_brief" if cite in brief_us else "index",
            )  # fmt: skip
        )
    return out


# federal series of 999 volumes: (first year, last year); volume ~ linear in time
_SERIES_YEARS = {
    "F.": (1880, 1924),
    "F.2d": (1924, 1993),
    "F.3d": (1993, 2021),
    "F. Supp.": (1932, 1998),
    "F. Supp. 2d": (1998, 2014),
}


def _year_fits(rep: str, vol: int, year: int) -> bool:
    if rep in _SERIES_YEARS:
        a, z = _SERIES_YEARS[rep]
        expected = a + (z - a) * min(vol, 999) / 999
        return abs(year - expected) <= 5
    if rep == "U.S.":
        return vol < 329 and 1790 <= year <= 1946
    from reporters_db import REPORTERS

    for ed_map in REPORTERS.values():
        for r in ed_map:
            ed = r["editions"].get(rep)
            if ed:
                lo = ed["start"].year if ed.get("start") else 1600
                hi = ed["end"].year if ed.get("end") else 2100
                return lo - 1 <= year <= hi + 1
    return True


_LEAD_PROSE = re.compile(
    r"^(?:In|As in|See|Under|And|But|Compare|Unlike|Like|Following|Citing|After|"
    r"Since|Before|Also|Thus|Accord|Moreover|Similarly|Indeed|Even|While|"
    r"Although|Because|Both|Then|Later|Until|With|When|Where|The case of|"
    r"in|and|but|see|cf\.|Cf\.|also)\s+"
)
_NAME_OK = re.compile(
    r"[A-Z][A-Za-z.,'’&\- ]{1,70} v\. [A-Z][A-Za-z.,'’&\- ]{1,70}|In re [A-Z][\w.,' ]+"
)


def absent_from_briefs(
    path: Path, store_cites: set[str], index: Index
) -> tuple[list[AbsentCase], dict[str, str]]:
    """Real non-U.S. (and pre-1946 U.S.) citations cited in real briefs.

    Only facts are kept: the case name as cited, the reporter citation, and the
    court/year parenthetical. Returns also U.S. cites in the index seen in briefs.
    """
    from eyecite import get_citations
    from eyecite.models import FullCaseCitation

    logging.getLogger("eyecite").setLevel(logging.ERROR)
    found: dict[str, Counter] = defaultdict(Counter)
    info: dict[str, tuple] = {}
    brief_us: dict[str, str] = {}
    keep_reps = {
        "F.2d", "F.3d", "F. Supp.", "F. Supp. 2d", "F.", "Cal. 3d", "Cal. 4th",
        "N.W.2d", "S.E.2d", "P.2d", "N.E.2d", "A.2d", "Mich. App.", "Ill. 2d",
        "U.S.",
    }  # fmt: skip
    for line in path.open(encoding="utf-8"):
        b = json.loads(line)
        text = b["text"]
        issue = "Civil Rights" if b["id"].startswith("amicus_corpus") else ""
        for c in get_citations(text):
            if not isinstance(c, FullCaseCitation):
                continue
            try:
                cite = c.corrected_citation()
            except Exception:  # noqa: BLE001
                continue
            pc = parse_cite(cite)
            if not pc or "(" in cite:
                continue
            vol, rep, pg = pc
            if rep not in keep_reps:
                continue
            s0, e0 = c.span()
            fs, fe = c.full_span()
            raw = text[fs:s0]
            raw = re.sub(r"^(?:See also|See, e\.g\.,|See|see also|see|Cf\.|cf\.|"
                         r"e\.g\.,|accord|Accord)\s+", "", raw.strip())  # fmt: skip
            raw = re.sub(r"\s+", " ", raw).rstrip(", ").strip()
            while True:  # prose words eyecite left in front of the name
                m = _LEAD_PROSE.match(raw)
                if not m or raw.startswith("In re "):
                    break
                raw = raw[m.end() :]
            if rep == "U.S.":
                if 329 <= vol <= 579 and index.exists(vol, pg):
                    brief_us[cite] = raw
                    continue
                if vol >= 329:
                    continue
            if not _NAME_OK.fullmatch(raw) or len(raw) > 90:
                continue
            if re.match(r"(?:Inc|Co|Corp|Ltd|LLC|L\.P|N\.A)\b", raw):
                continue  # eyecite started the name after a comma
            tail = text[e0:fe] + text[fe : fe + 1]
            m = re.match(r"(?:, [\d\-–, n.]+)?\s*\(([A-Za-z.\d' ]*?\b(\d{4}))\)", tail)
            if not m:
                continue
            paren = re.sub(r"\s+\.", ".", m.group(1).strip())
            year = m.group(2)
            if rep not in ("U.S.", "Cal. 3d", "Cal. 4th", "Mich. App.", "Ill. 2d"):
                if paren == year:
                    continue  # federal/regional reporter needs a court
            if cite in store_cites:
                continue
            found[cite][raw] += 1
            info[cite] = (vol, rep, pg, paren, year, issue)
    # drop likely typos in the briefs: a year the series cannot have, or the
    # same case name cited with another volume/page of the same series
    by_name: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for cite, names in found.items():
        nm = names.most_common(1)[0][0]
        by_name[(norm(nm), info[cite][1])][cite] += sum(names.values())
    out = []
    for cite in sorted(found):
        name = found[cite].most_common(1)[0][0]
        vol, rep, pg, paren, year, issue = info[cite]
        if not _year_fits(rep, vol, int(year)):
            continue
        rivals = by_name[(norm(name), rep)]
        if len(rivals) > 1 and rivals.most_common(1)[0][0] != cite:
            continue
        out.append(
            AbsentCase(
                cite,
                name,
                short_name(name),
                cite,
                vol,
                rep,
                pg,
                f"({paren})",
                year,
                issue,
                "brief",
            )  # fmt: skip
        )
    return out, brief_us


# --------------------------------------------------------------------------
# excerpt planning


@dataclass
class Slot:
    """One citation instance to be written."""

    case_key: str
    form: str  # full | short | id | supra
    support: str  # quote | prop | none
    absent: bool
    quote: Sentence | None = None
    prop: Prop | None = None
    hallucination: str | None = None
    detail: str = ""  # how the hallucination was made (README statistics)
    index: int = 0  # position in excerpt


@dataclass
class Block:
    kind: str  # store | absent_group
    slots: list[Slot]


@dataclass
class Plan:
    brief_id: str
    paragraphs: list[list[Block]]
    case_hall: dict[str, str] = field(default_factory=dict)


class Builder:
    def __init__(self):
        self.parts: list[str] = []
        self.len = 0
        self.spans: list[tuple[int, int, Slot, str]] = []

    def add(self, s: str) -> None:
        self.parts.append(s)
        self.len += len(s)

    def cite(self, s: str, slot: Slot, citation: str) -> None:
        self.spans.append((self.len, self.len + len(s), slot, citation))
        self.add(s)

    def stop(self) -> None:
        """End the sentence after a citation (no double period after Id.)."""
        last = self.parts[-1] if self.parts else ""
        self.add(" " if last.endswith(".") else ". ")

    def text(self) -> str:
        return "".join(self.parts)


class Generator:
    def __init__(
        self,
        split: str,
        store: list[StoreCase],
        absent: list[AbsentCase],
        index: Index,
        all_store_norm: list[str],
        rec_norm: dict[str, str],
        store_cites: set[str],
        vocab: Vocab,
        seed: int,
    ):
        self.vocab = vocab
        self.details: Counter[str] = Counter()
        self.fake_tags: Counter[str] = Counter()
        self.split = split
        self.rng = random.Random(f"{seed}:{split}")
        self.store = sorted(store, key=lambda c: c.opinion_id)
        self.absent = sorted(absent, key=lambda a: a.key)
        self.index = index
        self.all_store_norm = all_store_norm
        self.store_by_id = {c.opinion_id: c for c in self.store}
        self.absent_by_key = {a.key: a for a in self.absent}
        self.rec_norm = rec_norm
        self.used_quotes: set[tuple[str, str]] = set()
        self.store_cites = store_cites

    # ---------------- planning ----------------

    def _pick_quote(self, c: StoreCase, need_syn: bool = False) -> Sentence | None:
        pool = [q for q in c.quotes if (c.opinion_id, q.text) not in self.used_quotes]
        if not pool:
            return None
        q = self.rng.choice(pool)
        self.used_quotes.add((c.opinion_id, q.text))
        return q

    def _pick_prop(self, c: StoreCase, prefer_rank0: bool = True) -> Prop | None:
        pool = [p for p in c.props if (c.opinion_id, p.text) not in self.used_quotes]
        if not pool:
            return None
        best = [p for p in pool if p.rank == 0]
        if prefer_rank0 and best and self.rng.random() < 0.75:
            pool = best
        syl = [p for p in pool if p.source == "syllabus"]
        if syl and self.rng.random() < 0.7:
            pool = syl
        p = self.rng.choice(pool)
        self.used_quotes.add((c.opinion_id, p.text))
        return p

    def _store_slot(self, c: StoreCase, form: str) -> Slot | None:
        want_quote = self.rng.random() < (0.5 if form == "full" else 0.7)
        if form in ("short", "supra") and c.mode == "nopage":
            want_quote = self.rng.random() < 0.5
        if want_quote:
            q = self._pick_quote(c)
            if q:
                return Slot(c.opinion_id, form, "quote", False, quote=q)
        p = self._pick_prop(c)
        if p:
            if form == "short" and p.page is None:
                form = "supra"
            return Slot(c.opinion_id, form, "prop", False, prop=p)
        q = self._pick_quote(c)
        if q:
            return Slot(c.opinion_id, form, "quote", False, quote=q)
        return None

    def plan_excerpts(self) -> list[Plan]:
        rng = self.rng
        target = TARGET_INSTANCES[self.split]
        uses: Counter[str] = Counter()
        order = list(self.store)
        rng.shuffle(order)
        absent_order = list(self.absent)
        rng.shuffle(absent_order)
        brief_abs = [a for a in absent_order if a.source == "brief"]
        famous_abs = [a for a in absent_order if a.source == "index_brief"]
        other_abs = [a for a in absent_order if a.source == "index"]
        abs_uses: Counter[str] = Counter()
        plans: list[Plan] = []
        total = 0
        n = 0
        absent_total = 0
        while total < target:
            # choose 1-2 store cases, topically grouped where possible
            cand = sorted(order, key=lambda c: (uses[c.opinion_id], rng.random()))
            if not cand:
                break
            c1 = cand[0]
            cases = [c1]
            if rng.random() < 0.4:
                ok = [c for c in cand[1:40] if c.short.lower() != c1.short.lower()]
                same = [c for c in ok if c.issue == c1.issue and c.mode == c1.mode]
                pool = same or ok[:10]
                if pool:
                    cases.append(rng.choice(pool))
            for c in cases:
                uses[c.opinion_id] += 1
            blocks: list[Block] = []
            later: list[Block] = []
            for c in cases:
                s = self._store_slot(c, "full")
                if not s:
                    continue
                blk = Block("store", [s])
                if rng.random() < 0.4:
                    t = self._store_slot(c, "id")
                    if t:
                        blk.slots.append(t)
                blocks.append(blk)
                if rng.random() < 0.5:
                    form = "short" if rng.random() < 0.6 else "supra"
                    t = self._store_slot(c, form)
                    if t:
                        later.append(Block("store", [t]))
            # absent group(s): aim at ~19% of instances before hallucination
            want_abs = absent_total < 0.165 * (total + 1) + 1
            n_abs = 0
            if want_abs:
                n_abs = 1 if rng.random() < 0.6 else 2
            elif rng.random() < 0.15:
                n_abs = 1
            abs_slots = []
            for _ in range(n_abs):
                r = rng.random()
                pools = (
                    [brief_abs, famous_abs, other_abs]
                    if r < 0.25
                    else [famous_abs, other_abs, brief_abs]
                    if r < 0.6
                    else [other_abs, famous_abs, brief_abs]
                )
                chosen = None
                issue = c1.issue
                taken = {c.short.lower() for c in cases} | {
                    self.absent_by_key[x.case_key].short.lower() for x in abs_slots
                }
                for pool in pools:
                    fresh = [
                        a
                        for a in pool[:200]
                        if abs_uses[a.key] == 0 and a.short.lower() not in taken
                    ]
                    topical = [a for a in fresh if issue and a.issue == issue]
                    if topical or fresh:
                        chosen = rng.choice(topical or fresh)
                        break
                if chosen:
                    abs_uses[chosen.key] += 1
                    abs_slots.append(Slot(chosen.key, "full", "none", True))
            if abs_slots:
                pos = rng.randint(1, len(blocks)) if blocks else 0
                blocks.insert(pos, Block("absent_group", abs_slots))
            blocks.extend(later)
            # cap at 6 instances
            while sum(len(b.slots) for b in blocks) > 6:
                blocks.pop()
            count = sum(len(b.slots) for b in blocks)
            if count < 2:
                continue
            # paragraphs
            n_par = min(len(blocks), rng.choice([1, 1, 2, 2, 2, 3]))
            cuts = sorted(rng.sample(range(1, len(blocks)), n_par - 1))
            paras = []
            prev = 0
            for cpos in cuts + [len(blocks)]:
                paras.append(blocks[prev:cpos])
                prev = cpos
            n += 1
            bid = f"cite-{self.split}-{n:04d}"
            plans.append(Plan(bid, paras))
            total += count
            absent_total += sum(
                len(b.slots) for b in blocks if b.kind == "absent_group"
            )
        return plans

    # ---------------- hallucination assignment ----------------

    def _slot_pins(self, s: Slot) -> bool:
        c = self.store_by_id.get(s.case_key)
        if not c:
            return False
        if s.support == "quote":
            return c.mode != "nopage" or c.out_floor is not None
        if s.support == "prop":
            return s.prop is not None and s.prop.page is not None
        return False

    def assign(self, plans: list[Plan]) -> None:
        rng = self.rng
        slots = [
            s for p in plans for para in p.paragraphs for b in para for s in b.slots
        ]
        n_total = len(slots)
        quota = {k: round(n_total * HALLUCINATION_RATE * KIND_SHARE[k]) for k in KINDS}
        got: Counter[str] = Counter()
        # case-level kinds first: pick (plan, case) groups
        groups = []
        for p in plans:
            by_case: dict[str, list[Slot]] = defaultdict(list)
            for para in p.paragraphs:
                for b in para:
                    for s in b.slots:
                        by_case[s.case_key].append(s)
            for key, ss in sorted(by_case.items()):
                a = self.absent_by_key.get(key)
                if a is not None and a.source == "brief":
                    continue  # never altered (like the paper's not-found cites)
                groups.append((p, key, ss))
        rng.shuffle(groups)
        gi = 0
        for kind in ("no_such_case", "case_name_mismatch"):
            while got[kind] < quota[kind] and gi < len(groups):
                p, key, ss = groups[gi]
                gi += 1
                if kind == "no_such_case":
                    a = self.absent_by_key.get(key)
                    if a is not None and rng.random() < 0.5:
                        pass
                if got[kind] + len(ss) > quota[kind] + 1 and len(ss) > 1:
                    continue
                p.case_hall[key] = kind
                for s in ss:
                    s.hallucination = kind
                got[kind] += len(ss)
        # instance-level kinds; sub-quotas keep the ways of making them mixed:
        # quote_not_found 85% synonym swaps (the quotation must hold a word of
        # the table) / 15% fabricated; proposition_not_supported ~70% flipped
        # (a flippable holding) / ~30% another opinion's holding
        free = [s for s in slots if s.hallucination is None and not s.absent]
        rng.shuffle(free)

        def has_syn(s: Slot) -> bool:
            return any(
                w.lower() in MISQUOTE_SYNONYMS for w in WORD_RE.findall(s.quote.text)
            )

        plan_steps = [
            ("quote_not_found", "synonyms", 0.85, lambda s: s.support == "quote"
             and has_syn(s)),
            ("quote_not_found", "fabricated", 1.0, lambda s: s.support == "quote"),
            ("pincite_out_of_range", "", 1.0, self._slot_pins),
            ("proposition_not_supported", "flip", 0.7, lambda s: s.support == "prop"
             and self._flip(s.prop.text) is not None),
            ("proposition_not_supported", "other", 1.0,
             lambda s: s.support == "prop"),
        ]  # fmt: skip
        for kind, detail, share, ok in plan_steps:
            limit = round(quota[kind] * share) if share < 1 else quota[kind]
            for s in free:
                if got[kind] >= limit:
                    break
                if s.hallucination is not None or not ok(s):
                    continue
                s.hallucination = kind
                if detail == "fabricated":
                    s.detail = "fabricated"
                elif detail == "other":
                    s.detail = "other_opinion"
                got[kind] += 1

    # ---------------- rendering ----------------

    def _quote_text(self, q: Sentence, lead_lower: bool, whole: bool = False) -> str:
        """A correct rendering of a quotation of q (ellipsis, brackets...)."""
        rng = self.rng
        core = q.text[:-1] if q.text.endswith(".") else q.text
        words = core.split()
        if words[0] in ("And", "But", "Or", "Nor", "So", "Yet") and len(words) > 8:
            words = words[1:]  # "[C]onsequently, ..." after dropping "And"
        r = 1.0 if whole else rng.random()
        if r < 0.22:
            # clause: start after a comma or after "that"
            cuts = [
                i + 1
                for i, w in enumerate(words[:-6])
                if (w.endswith(",") or w == "that") and i >= 2
            ]
            if cuts:
                k = rng.choice(cuts)
                words = words[k:]
                words[-1] = words[-1].rstrip(",;:")
        elif r < 0.42 and len(words) >= 14:
            # drop a stretch between two commas ("A, . . . C" / "A ... C")
            commas = [i for i, w in enumerate(words[:-3]) if w.endswith(",")]
            pairs = [(a, z) for a in commas for z in commas if 2 <= z - a <= 12]
            if pairs and commas[0] >= 2:
                a, z = rng.choice(pairs)
                left = " ".join(words[: a + 1]).rstrip(",")
                right = " ".join(words[z + 1 :])
                sep = " . . . " if rng.random() < 0.6 else " ... "
                words = (left + sep + right).split(" ")
        text = " ".join(words)
        first = text.split()[0]
        bare = first.rstrip(",;:")
        if lead_lower:
            if first[0].isupper() and self.vocab.can_lower(bare):
                if rng.random() < 0.5:
                    text = "[" + text[0].lower() + "]" + text[1:]
                else:
                    text = text[0].lower() + text[1:]
        else:
            if first[0].islower():
                text = "[" + text[0].upper() + "]" + text[1:]
        return text

    def _misquote(self, text: str, c: StoreCase) -> str | None:
        rng = self.rng
        toks = list(re.finditer(r"(?<!\[)\b[A-Za-z]+\b(?!\])", text))
        cands = [m for m in toks if m.group(0).lower() in MISQUOTE_SYNONYMS]
        if not cands:
            return None
        k = 2 if len(cands) >= 2 and rng.random() < 0.4 else 1
        chosen = sorted(rng.sample(cands, k), key=lambda m: m.start(), reverse=True)
        out = text
        for m in chosen:
            w = m.group(0)
            rep = MISQUOTE_SYNONYMS[w.lower()]
            if w[0].isupper():
                rep = rep[0].upper() + rep[1:]
            out = out[: m.start()] + rep + out[m.end() :]
        return out

    def _quote_present(self, text: str, hay: str) -> bool:
        """Every fragment of a rendered quotation occurs in normalised hay."""
        frags = re.split(r"\s*(?:\. \. \.|\.\.\.)\s*", text)
        for f in frags:
            nf = norm(re.sub(r"\[(\w)\]", r"\1", f))
            if nf and nf not in hay:
                return False
        return True

    def _page_norm(self, c: StoreCase, page: int | None) -> str:
        if page is None or page not in c.page_texts:
            return self.rec_norm[c.opinion_id]
        return norm(c.page_texts[page])

    def _fabricated(self) -> str:
        for _ in range(50):
            q = self.rng.choice(FABRICATED_QUOTES)
            if not any(norm(q) in t for t in self.all_store_norm):
                return q
        raise RuntimeError("no fabricated quote absent from the store")

    def _flip(self, prop: str) -> str | None:
        """``prop`` with one phrase of :data:`FLIPS` replaced (None if it has
        none); a lower-case key matches capitalised only at the start."""
        found = []
        for m in _FLIP_RE.finditer(prop):
            got = m.group(0)
            key = got if got in FLIPS else got[0].lower() + got[1:]
            if key not in FLIPS or (key != got and m.start() > 0):
                continue
            if key == "all" and prop[: m.start()].endswith("at "):
                continue  # "at all"
            if key == "if" and re.search(r"\bas $", prop[: m.start()]):
                continue  # "as if"
            found.append((m, key))
        if not found:
            return None
        m, key = self.rng.choice(found)
        rep = FLIPS[key]
        if m.group(0)[0].isupper() and rep[0].islower():
            rep = rep[0].upper() + rep[1:]
        return prop[: m.start()] + rep + prop[m.end() :]

    def _other_prop(self, c: StoreCase) -> str:
        pool = [
            p.text
            for o in self.store
            if o.opinion_id != c.opinion_id
            for p in o.props
            if p.rank == 0 and p.source == "syllabus"
        ]
        return self.rng.choice(pool)

    # citation strings -----------------------------------------------------

    def _fake_cite(self, key: str, vol: int, rep: str, page: int, year: str):
        """Return (cite_str_without_paren, paren_court, kind_tag, vol, rep, page)."""
        rng = self.rng
        # keep the three ways balanced (shares 0.45 / 0.30 / 0.25; the first only
        # for U.S. cites, which the index can prove non-existent)
        share = {"us_mid_case": 0.45, "fake_series": 0.30, "beyond_volume": 0.25}
        tags = [t for t in share if rep == "U.S." or t != "us_mid_case"]
        total = sum(self.fake_tags.values()) + 1
        tag = min(
            tags,
            key=lambda t: (self.fake_tags[t] - share[t] * total, rng.random()),
        )
        self.fake_tags[tag] += 1
        r = {"us_mid_case": 0.0, "fake_series": 0.5, "beyond_volume": 0.9}[tag]
        if tag == "us_mid_case":
            for _ in range(50):
                if rng.random() < 0.5:
                    nv = vol
                    np_ = self.index.mid_case_page(vol, rng)
                else:
                    nv = min(579, max(329, vol + rng.choice([-3, -2, -1, 1, 2, 3])))
                    np_ = self.index.mid_case_page(nv, rng)
                if np_ is None or self.index.exists(nv, np_):
                    continue
                cs = f"{nv} U.S. {np_}"
                if cs in self.store_cites:
                    continue
                return cs, "", "us_mid_case", nv, "U.S.", np_
        if r < 0.75:
            series, court = rng.choice(FAKE_SERIES)
            court = court.format(
                circuit=rng.choice(["1st", "2d", "3d", "4th", "5th", "6th", "7th",
                                    "8th", "9th", "10th", "11th", "D.C."])
            )  # fmt: skip
            nv = rng.randint(12, 480)
            np_ = rng.randint(15, 1390)
            return f"{nv} {series} {np_}", court, "fake_series", nv, series, np_
        top = MAX_VOLUME.get(rep, 999)
        nv = top + rng.randint(120, 900)
        if rep == "U.S.":
            nv = rng.randint(700, 999)
        return f"{nv} {rep} {page}", None, "beyond_volume", nv, rep, page

    def _mismatch_name(self, key: str, orig: str, avoid: set[str]) -> str:
        rng = self.rng
        orig_short = short_name(orig).lower()
        pool = [a.name for a in self.absent if a.source != "brief"] + [
            c.name for c in self.store
        ]
        for _ in range(100):
            n = rng.choice(pool)
            sn = short_name(n).lower()
            if n != orig and sn != orig_short and sn not in avoid:
                return n
        raise RuntimeError("no mismatch name")

    def render(self, plan: Plan) -> tuple[str, list[dict]]:
        rng = self.rng
        b = Builder()
        case_state: dict[str, dict] = {}
        last_case: str | None = None
        plan_shorts = set()
        for para in plan.paragraphs:
            for blk in para:
                for sl in blk.slots:
                    src = self.store_by_id.get(sl.case_key) or self.absent_by_key.get(
                        sl.case_key
                    )
                    plan_shorts.add(src.short.lower())

        def state_for(key: str) -> dict:
            if key in case_state:
                return case_state[key]
            st: dict = {"key": key}
            c = self.store_by_id.get(key)
            a = self.absent_by_key.get(key)
            src = c or a
            st["name"] = src.name
            st["short"] = src.short
            st["vol"], st["rep"], st["page"] = src.volume, src.reporter, src.page
            st["cite"] = src.cite
            st["year"] = src.year
            st["paren_court"] = c.court if c else None
            st["abs_paren"] = a.paren if a else None
            st["opinion_id"] = c.opinion_id if c else None
            st["absent"] = a is not None
            st["slip_style"] = rng.random() < 0.55
            st["us_comma"] = src.reporter == "U.S." and rng.random() < 0.6
            kind = plan.case_hall.get(key)
            st["kind"] = kind
            if kind == "case_name_mismatch":
                st["name"] = self._mismatch_name(key, src.name, plan_shorts)
                st["short"] = short_name(st["name"])
            elif kind == "no_such_case":
                fc, court, tag, nv, nrep, npg = self._fake_cite(
                    key, src.volume, src.reporter, src.page, src.year
                )
                st["fake"] = tag
                st["cite"] = fc
                st["vol"], st["rep"], st["page"] = nv, nrep, npg
                st["pin_shift"] = npg - src.page
                st["opinion_id"] = None
                st["absent"] = False
                if court is not None:
                    st["paren_court"] = court
                    st["abs_paren"] = f"({court} {src.year})" if court else None
                if a and tag == "us_mid_case":
                    st["abs_paren"] = a.paren
                if tag == "fake_series":
                    st["slip_style"] = None
                elif c and c.mode == "slip":
                    st["slip_style"] = False
            case_state[key] = st
            return st

        def full_cite(st: dict, pin: int | None) -> str:
            c = self.store_by_id.get(st["key"])
            name, year = st["name"], st["year"]
            if st.get("fake") == "fake_series":
                court = st["paren_court"]
                paren = f"({court} {year})" if court else f"({year})"
                fpin = None
                if pin is not None:
                    fpin = st["page"] + (
                        rng.randint(1, 12) if c.mode == "slip" else pin - c.page
                    )
                pc = f", {fpin}" if fpin else ""
                return f"{name}, {st['cite']}{pc} {paren}"
            if c is None:  # absent
                paren = st["abs_paren"] or f"({year})"
                return f"{name}, {st['cite']} {paren}"
            shift = st.get("pin_shift", 0)
            if c.mode == "slip":
                if st["slip_style"]:
                    base = f"{name}, {st['vol']} U. S. ___"
                    if pin is not None:
                        return f"{base}, ___ ({year}) (slip op., at {pin})"
                    return f"{base} ({year})"
                base = f"{name}, {st['cite']} ({year})"
                return f"{base} (slip op., at {pin})" if pin is not None else base
            court = st["paren_court"]
            paren = f"({court} {year})" if court else f"({year})"
            pc = f", {pin + shift}" if pin is not None else ""
            return f"{name}, {st['cite']}{pc} {paren}"

        def short_cite(st: dict, form: str, pin: int | None) -> str:
            c = self.store_by_id[st["key"]]
            shift = st.get("pin_shift", 0)
            fake_series = st.get("fake") == "fake_series"
            if form == "id":
                if pin is None:
                    return "Id."
                if c.mode == "slip" and not fake_series:
                    return f"Id., at ___ (slip op., at {pin})"
                p = pin + shift if not fake_series else st["page"] + abs(pin) % 9 + 1
                return f"Id., at {p}" if st["us_comma"] else f"Id. at {p}"
            if form == "supra":
                if pin is None:
                    return f"{st['short']}, supra"
                if c.mode == "slip" and not fake_series:
                    return f"{st['short']}, supra, at ___ (slip op., at {pin})"
                return f"{st['short']}, supra, at {pin + shift}"
            # short
            if pin is None:
                return f"{st['short']}, supra"
            if c.mode == "slip" and not fake_series:
                if rng.random() < 0.15:
                    return f"{st['short']}, slip op., at {pin}"
                return f"{st['short']}, {st['vol']} U. S., at ___ (slip op., at {pin})"
            if fake_series:
                p = st["page"] + (pin - c.page if c.mode != "slip" else 3)
                return f"{st['short']}, {st['vol']} {st['rep']} at {p}"
            if pin is None:
                return f"{st['short']}, supra"
            p = pin + shift
            if st["rep"] == "U.S." and st["us_comma"]:
                return f"{st['short']}, {st['vol']} U.S., at {p}"
            return f"{st['short']}, {st['vol']} {st['rep']} at {p}"

        def wrong_pin(s: Slot, c: StoreCase, q_page: int | None) -> int:
            if q_page is not None and c.page_texts and rng.random() < 0.55:
                pages = [
                    p
                    for p in sorted(c.page_texts)
                    if p != q_page and (c.mode != "slip" or p > 1)
                ]
                if pages:
                    s.detail = "in_range_wrong_page"
                    return rng.choice(pages)
            assert c.out_floor is not None, c.opinion_id
            if rng.random() < 0.15 and c.mode != "slip" and c.first and c.first > 20:
                s.detail = "before_first_page"
                return c.first - rng.randint(3, 15)
            s.detail = "past_last_page"
            return c.out_floor + rng.randint(0, 30)

        out_truth: list[dict] = []

        def cw(c: StoreCase) -> str:
            return "the Court" if c.reporter == "U.S." else "the court"

        for pi, para in enumerate(plan.paragraphs):
            if pi > 0:
                b.add("\n\n")
            if pi == 0:
                b.add(rng.choice(OPENERS) + " ")
            elif rng.random() < 0.7:
                b.add(rng.choice(TRANSITIONS) + " ")
            for blk in para:
                if blk.kind == "absent_group":
                    b.add(rng.choice(CLAIMS_FOR_STRING) + " ")
                    sig = rng.choice(["See, e.g., ", "See ", "See also ", "Cf. "])
                    b.add(sig)
                    for k, s in enumerate(blk.slots):
                        st = state_for(s.case_key)
                        if k > 0:
                            b.add("; " + ("see also " if rng.random() < 0.4 else ""))
                        b.cite(full_cite(st, None), s, st["cite"])
                        last_case = s.case_key
                    b.stop()
                    continue
                for s in blk.slots:
                    c = self.store_by_id[s.case_key]
                    st = state_for(s.case_key)
                    the_court = cw(c)
                    hall = s.hallucination
                    pin: int | None = None
                    qtext = None
                    ptext = None
                    if s.support == "quote":
                        q = s.quote
                        pin = q.page
                        inline = rng.random() < 0.5
                        qtext = self._quote_text(q, lead_lower=inline)
                        if hall == "quote_not_found":
                            alt = None
                            if s.detail != "fabricated":
                                # keep the whole sentence so the swapped word stays
                                qtext = self._quote_text(
                                    q, lead_lower=inline, whole=True
                                )
                                alt = self._misquote(qtext, c)
                                hay = self.rec_norm[c.opinion_id]
                                if alt and self._quote_present(alt, hay):
                                    alt = None
                                s.detail = "synonyms"
                            if alt is None:
                                s.detail = "fabricated"
                                alt = self._fabricated()
                                alt = (
                                    alt[0].lower() + alt[1:]
                                    if inline and self.vocab.can_lower(alt.split()[0])
                                    else alt
                                )
                            qtext = alt
                        if hall is None or hall in (
                            "no_such_case",
                            "case_name_mismatch",
                        ):
                            hay = self._page_norm(c, q.page)
                            if not self._quote_present(qtext, hay):
                                raise AssertionError((c.opinion_id, q.page, qtext))
                        if hall == "pincite_out_of_range":
                            pin = wrong_pin(s, c, q.page)
                            if pin in c.page_texts:
                                hay = self._page_norm(c, pin)
                                assert not self._quote_present(qtext, hay), qtext
                        if c.mode == "nopage" and hall != "pincite_out_of_range":
                            pin = None
                    else:
                        p = s.prop
                        pin = p.page
                        ptext = p.text
                        if hall == "proposition_not_supported":
                            alt = (
                                None
                                if s.detail == "other_opinion"
                                else self._flip(ptext)
                            )
                            s.detail = "flipped" if alt else "other_opinion"
                            ptext = alt or self._other_prop(c)
                        if hall == "pincite_out_of_range":
                            pin = wrong_pin(s, c, None)
                    if s.form == "full":
                        cite_str = full_cite(st, pin)
                    else:
                        if s.form == "id" and last_case != s.case_key:
                            s.form = "short"
                        cite_str = short_cite(st, s.form, pin)
                    self._write_instance(
                        b, s, st, cite_str, qtext, ptext, the_court, rng
                    )
                    last_case = s.case_key
            if pi == len(plan.paragraphs) - 1 and rng.random() < 0.35:
                b.add(rng.choice(CLOSERS))
        text = b.text().rstrip()
        for start, end, s, _citation in b.spans:
            st = case_state[s.case_key]
            if s.hallucination == "no_such_case":
                s.detail = st["fake"]
            elif s.hallucination == "case_name_mismatch":
                s.detail = "absent_case" if s.absent else "store_case"
            if s.hallucination:
                self.details[f"{s.hallucination}:{s.detail}"] += 1
            out_truth.append(
                {
                    "brief_id": plan.brief_id,
                    "start": start,
                    "end": end,
                    "text": text[start:end],
                    "form": s.form,
                    "hallucination": s.hallucination,
                    "absent": bool(st["absent"]),
                    "opinion_id": st["opinion_id"],
                    "citation": st["cite"],
                }
            )
        return text, out_truth

    def _write_instance(self, b, s, st, cite_str, qtext, ptext, the_court, rng):
        Q = ("“", "”") if rng.random() < 0.7 else ('"', '"')
        Cap = the_court[0].upper() + the_court[1:]
        if s.support == "quote":
            if qtext[0] in "[" and qtext[1].islower() or qtext[0].islower():
                lead_lower = True
            else:
                lead_lower = False
            if s.form == "full":
                style = rng.random()
                if lead_lower and style < 0.5:
                    intro = rng.choice(["In ", "As " + the_court + " observed in "])
                    verb = f", {the_court} explained that " if intro == "In " else ", "
                    b.add(intro)
                    b.cite(cite_str, s, st["cite"])
                    b.add(f"{verb}{Q[0]}{qtext}.{Q[1]} ")
                elif lead_lower:
                    lead = rng.choice(
                        [
                            f"As {the_court} has explained, ",
                            f"{Cap} has recognized that ",
                            "Indeed, ",
                            f"{Cap} emphasized that ",
                        ]
                    )
                    b.add(f"{lead}{Q[0]}{qtext}.{Q[1]} ")
                    b.cite(cite_str, s, st["cite"])
                    b.stop()
                else:
                    if rng.random() < 0.5:
                        lead = rng.choice(
                            [
                                f"{Cap} put the point directly: ",
                                "The controlling principle is settled: ",
                                f"{Cap} said as much: ",
                            ]
                        )
                        b.add(f"{lead}{Q[0]}{qtext}.{Q[1]} ")
                        b.cite(cite_str, s, st["cite"])
                        b.stop()
                    else:
                        b.add(rng.choice(TRANSITIONS) + " See ")
                        b.cite(f"{cite_str} ({Q[0]}{qtext}{Q[1]})", s, st["cite"])
                        b.stop()
            else:
                if s.form == "id" or rng.random() < 0.6:
                    if lead_lower:
                        lead = rng.choice(
                            [
                                f"{Cap} added that ",
                                f"{Cap} went on to explain that ",
                                "The opinion also observed that ",
                            ]
                        )
                        b.add(f"{lead}{Q[0]}{qtext}.{Q[1]} ")
                    else:
                        b.add(f"{Q[0]}{qtext}.{Q[1]} ")
                    b.cite(cite_str, s, st["cite"])
                    b.stop()
                else:
                    b.add(rng.choice(TRANSITIONS) + " See ")
                    b.cite(f"{cite_str} ({Q[0]}{qtext}{Q[1]})", s, st["cite"])
                    b.stop()
            return
        # proposition
        p = ptext
        holding = (
            s.prop.rank == 0
            and s.prop.source == "syllabus"
            or (s.prop.source == "opinion" and s.prop.rank == 0)
        )
        verb = (
            "holding"
            if holding
            else rng.choice(["explaining", "recognizing", "noting"])
        )
        pl = lower_first(p, self.vocab)
        style = rng.random()
        if s.form == "full" and style < 0.35:
            b.add(rng.choice(TRANSITIONS) + " " + rng.choice(["See ", "See also ", ""]))
            b.cite(f"{cite_str} ({verb} that {pl})", s, st["cite"])
            b.stop()
        elif s.form == "full" and style < 0.6:
            b.add("In ")
            b.cite(cite_str, s, st["cite"])
            b.add(f", {the_court} {'held' if holding else 'explained'} that {pl}. ")
        else:
            lead = (
                rng.choice([f"{Cap} has held that ", f"{Cap} held that ",
                            f"{Cap} has made clear that "])
                if holding
                else rng.choice([f"{Cap} has explained that ",
                                 f"{Cap} recognized that ", "It is settled that "])
            )  # fmt: skip
            if s.form != "full":
                lead = (
                    f"{Cap} further held that "
                    if holding
                    else rng.choice(
                        [f"{Cap} also explained that ", f"{Cap} noted that "]
                    )
                )
            b.add(f"{lead}{pl}. ")
            if s.form == "full" and rng.random() < 0.5:
                b.add("See ")
            elif s.form != "full" and s.form != "id" and rng.random() < 0.5:
                b.add("See ")
            b.cite(cite_str, s, st["cite"])
            b.stop()


# --------------------------------------------------------------------------
# verification and output


def verify(split: str, briefs: list[dict], truth: list[dict]) -> dict:
    from eyecite import get_citations
    from eyecite.models import (
        FullCaseCitation,
        IdCitation,
        ShortCaseCitation,
        SupraCitation,
    )

    logging.getLogger("eyecite").setLevel(logging.ERROR)
    texts = {b["id"]: b["text"] for b in briefs}
    found_by_brief = {}
    for bid, t in texts.items():
        found_by_brief[bid] = [
            c
            for c in get_citations(t)
            if isinstance(
                c, FullCaseCitation | ShortCaseCitation | IdCitation | SupraCitation
            )
        ]
    stats: Counter[str] = Counter()
    missed_examples = []
    for r in truth:
        t = texts[r["brief_id"]]
        assert t[r["start"] : r["end"]] == r["text"], r
        hit = any(
            c.span()[0] < r["end"] and r["start"] < c.span()[1]
            for c in found_by_brief[r["brief_id"]]
        )
        fake_series = bool(
            r["hallucination"] == "no_such_case"
            and any(s in r["text"] for s, _ in FAKE_SERIES)
        )
        key = "fake_series" if fake_series else r["form"]
        stats[f"{key}:total"] += 1
        if not hit:
            stats[f"{key}:missed"] += 1
            if not fake_series and len(missed_examples) < 5:
                missed_examples.append(r["text"])
    # eyecite citations outside any truth span
    spans = defaultdict(list)
    for r in truth:
        spans[r["brief_id"]].append((r["start"], r["end"]))
    stray = 0
    for bid, cs in found_by_brief.items():
        for c in cs:
            a, z = c.span()
            if not any(a < e and s < z for s, e in spans[bid]):
                stray += 1
    return {"stats": dict(stats), "missed_examples": missed_examples, "stray": stray}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--opinions", type=Path, default=DATA / "opinions.jsonl")
    ap.add_argument("--index", type=Path, default=DATA / "us_citation_index.jsonl")
    ap.add_argument("--briefs", type=Path, default=DATA / "briefs.jsonl")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "data" / "citations")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("eyecite").setLevel(logging.ERROR)

    index = Index(args.index)
    texts: list[str] = []
    recs = load_store(args.opinions, texts)
    vocab = Vocab(texts)
    store, notes = build_store_cases(recs, index, vocab)
    store_cites = {c for r in recs for c in r.get("citations") or []}
    brief_abs, brief_us = absent_from_briefs(args.briefs, store_cites, index)
    index_abs = absent_from_index(index, store_cites, brief_us)
    rec_norm = {r["id"]: norm(r["text"]) for r in recs}
    whole_store_norm = list(rec_norm.values())

    for c in store:
        c.split = "dev" if sha_unit(c.opinion_id) < DEV_SHARE else "test"
    absent = index_abs + brief_abs
    for a in absent:
        a.split = "dev" if sha_unit(a.key) < DEV_SHARE else "test"

    args.out.mkdir(parents=True, exist_ok=True)
    summary = {}
    for split in ("dev", "test"):
        gen = Generator(
            split,
            [c for c in store if c.split == split],
            [a for a in absent if a.split == split],
            index,
            whole_store_norm,
            rec_norm,
            store_cites,
            vocab,
            args.seed,
        )
        plans = gen.plan_excerpts()
        gen.assign(plans)
        briefs, truth = [], []
        for p in plans:
            text, tr = gen.render(p)
            briefs.append({"id": p.brief_id, "text": text})
            truth.extend(tr)
        ver = verify(split, briefs, truth)
        with (args.out / f"briefs_{split}.jsonl").open("w", encoding="utf-8") as f:
            for r in briefs:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        with (args.out / f"truth_{split}.jsonl").open("w", encoding="utf-8") as f:
            for r in truth:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        summary[split] = (briefs, truth, ver, gen)
    write_readme(args, summary, store, index_abs, brief_abs, notes)
    print_counts(summary)
    return 0


def counts_table(truth: list[dict]) -> dict[str, int]:
    c: Counter[str] = Counter()
    for r in truth:
        if r["hallucination"]:
            c[r["hallucination"]] += 1
        elif r["absent"]:
            c["correct_absent"] += 1
        else:
            c["correct_in_store"] += 1
    return c


def print_counts(summary: dict) -> None:
    for split, (briefs, truth, ver, gen) in summary.items():
        c = counts_table(truth)
        forms = Counter(r["form"] for r in truth)
        print(f"[{split}] excerpts={len(briefs)} citations={len(truth)}")
        print("  how made:", dict(sorted(gen.details.items())))
        for k in ["correct_in_store", "correct_absent", *KINDS]:
            print(f"  {k:28s} {c.get(k, 0):4d}")
        print("  forms:", dict(sorted(forms.items())))
        st = ver["stats"]
        for key in ("full", "short", "id", "supra", "fake_series"):
            tot = st.get(f"{key}:total", 0)
            if tot:
                miss = st.get(f"{key}:missed", 0)
                print(
                    f"  eyecite missed {key:12s} {miss:3d}/{tot:3d} ({miss / tot:.0%})"
                )
        print("  eyecite citations outside truth spans:", ver["stray"])


def write_readme(args, summary, store, index_abs, brief_abs, notes) -> None:
    lines = []
    lines.append(
        "# Legal-citation benchmark (LePhantomCite-style, built from real opinions)\n"
    )
    lines.append(
        "Built by `bench/build_citation_benchmark.py` "
        f"(`--seed {args.seed}`; rerunning writes the same files). Sources: "
        "`opinions.jsonl` (citable opinions), `us_citation_index.jsonl` (SCDB U.S. "
        "Reports index) and `briefs.jsonl` (only case name + reporter cite + "
        "court/year of real non-U.S. citations, extracted with eyecite; no brief "
        "prose is copied). Excerpt prose around the citations is template text "
        "written for this benchmark.\n"
    )
    lines.append("## Files\n")
    lines.append(
        "- `briefs_{dev,test}.jsonl`: `{id, text}`, brief-like excerpts, 1-3 "
        "paragraphs, 2-6 citation instances each.\n"
        "- `truth_{dev,test}.jsonl`: one line per citation instance: `brief_id`, "
        "`start`, `end`, `text` (`text == brief[start:end]`, from the case name or "
        "`Id.` after any signal through the last parenthetical, explanatory or "
        "quoting parenthetical included), `form` (`full|short|id|supra`), "
        "`hallucination` (null or one of the five kinds), `absent`, `opinion_id`, "
        "`citation` (the base reporter cite of the full citation the instance "
        "resolves to, as written in the excerpt, e.g. a fabricated `563 U.S. 604`).\n"
    )
    lines.append("## Counts\n")
    hdr = (
        "| split | excerpts | citations | correct (store) | correct (absent) | "
        + " | ".join(KINDS)
        + " |"
    )
    lines.append(hdr)
    lines.append("|" + "---|" * (5 + len(KINDS)))
    for split, (briefs, truth, _ver, _gen) in summary.items():
        c = counts_table(truth)
        row = [split, len(briefs), len(truth), c.get("correct_in_store", 0),
               c.get("correct_absent", 0)] + [c.get(k, 0) for k in KINDS]  # fmt: skip
        lines.append("| " + " | ".join(str(x) for x in row) + " |")
    lines.append("")
    forms_line = []
    for split, (_b, truth, ver, _g) in summary.items():
        forms = Counter(r["form"] for r in truth)
        st = ver["stats"]
        miss = {
            k: f"{st.get(k + ':missed', 0)}/{st.get(k + ':total', 0)}"
            for k in ("full", "short", "id", "supra", "fake_series")
        }
        forms_line.append(
            f"- {split}: forms {dict(sorted(forms.items()))}; eyecite finds no "
            f"citation overlapping the span for {miss} (fake_series = non-existent "
            "reporter series, expected); eyecite citations outside any truth "
            f"span: {ver['stray']}."
        )
    lines.extend(forms_line)
    lines.append("")
    lines.append("How the hallucinations were made (instances):\n")
    for split, (_b, _t, _v, gen) in summary.items():
        lines.append(
            f"- {split}: "
            + ", ".join(f"{k} {v}" for k, v in sorted(gen.details.items()))
        )
    lines.append("")
    n_store = Counter(c.split for c in store)
    modes = Counter(c.mode for c in store)
    lines.append("## How it was built\n")
    lines.append(
        f"- **Citable opinions** ({len(store)}: {dict(modes)}; dev {n_store['dev']}, "
        f"test {n_store['test']}): records with a reporter citation and a page "
        "scheme. `slip` = Supreme Court slip opinions: cited as `Name, 561 U. S. "
        "___, ___ (2010) (slip op., at 5)` or `Name, 561 U.S. 593 (2010) (slip op., "
        "at 5)`; the slip page is the lead opinion's `[slip op. N]` page holding "
        "the quoted sentence (slip pages restart for each separate opinion; only "
        "the lead opinion is quoted; pages marked `?` are inferred only between "
        "two consecutive numbers). `star` = official star pagination (Fastcase "
        "`[vol Rep page]` of the cited reporter, CAP `*N`, raminass `*N` U.S. "
        "pages): pincite = the page whose marker precedes the sentence. `nopage` = "
        "AuthoritySpoke records without markers: quotations carry no pincite. "
        "PDF, NY slip and unreported records are not cited; the slip copy of NFIB "
        "v. Sebelius is not cited because the raminass copy has U.S. pages.\n"
        "- **Quotations**: whole sentences of one page (never spanning a page "
        "break; the first and last sentence fragment of each page are dropped), "
        "letters and punctuation only (no digits, citations, inner quotes or "
        "brackets), no hyphenation artifacts (corpus vocabulary check); rendered "
        "whole, as a clause after a comma/`that`, with an ellipsis (` . . . ` or "
        "`...`), with a bracketed case change (`[t]he`, `[T]he`) or with a plain "
        "case change; in the citation sentence (`In X, ..., the Court explained "
        "that “...”`), in the sentence just before it, or in a parenthetical "
        "`(“...”)`; curly or straight quotes.\n"
        "- **Propositions**: the syllabus after `Held:` (first sentence and the "
        "`... concluded that X` clauses are holdings: `(holding that ...)`, "
        "`The Court held that ...`; later syllabus sentences: `(explaining "
        "that ...)`), `Pp.` references and enumerators removed, first word "
        "lower-cased when common; or, without a syllabus, an opinion sentence "
        "(`We hold that X` -> `(holding that X)`), which then carries its page.\n"
        "- **Short forms** follow the full citation: `Id. at N` / `Id., at ___ "
        "(slip op., at N)` (only right after a citation of the same case), `Name, "
        "561 U.S., at N`, `Name, 100 A.3d at N`, `Name, 561 U. S., at ___ (slip op., "
        "at N)`, `Name, slip op., at N`, `Name, supra, at N`, `Name, supra` "
        "(proposition without a page).\n"
        f"- **Absent but real**: {len(index_abs)} SCDB cases not in the store with a "
        "name that shortens cleanly (first party of each side, title case, persons "
        "by surname: `Cleveland v. United States, 329 U.S. 14 (1946)`), preferring "
        "cases the real briefs cite; and "
        f"{len(brief_abs)} non-U.S. (or pre-1946 U.S.) citations found by eyecite "
        "in `briefs.jsonl` with the case name as the brief gives it and its "
        "court/year parenthetical. They are cited in string cites after a general "
        "sentence (`See, e.g., A; B.`), never with a quotation or pincite. Brief "
        "citations are never altered (as the paper leaves CourtListener-missing "
        "cites alone).\n"
        "- **Hallucinations** (quota per split: 25% of instances, shares no_such "
        "0.15, mismatch 0.17, pincite 0.17, quote 0.17, proposition 0.34; one kind "
        "per instance). `no_such_case` and `case_name_mismatch` are chosen per "
        "(excerpt, case) and applied to every instance of that case in the "
        "excerpt, including `Id.`/`supra` forms (which carry the same label). "
        "no_such_case: a U.S. page strictly inside another case of the same or a "
        "nearby volume (checked against the index), a non-existent series "
        "(`F.5th`, `Cal. Rptr. 4th`, `So. 4th`, `P.4th`, `S. Ct. 2d`, ...) with a "
        "made-up volume/page, or a volume beyond the series (`712 U.S.`, `1203 "
        "A.3d`); the quotation/holding stays the real one. case_name_mismatch: "
        "another real case's name (index or store, same split). "
        "pincite_out_of_range: a page past the case (the next case's first page "
        "in the index for U.S., last page + 3 otherwise, slip pages past the lead "
        "opinion's last) or, for quotations, another page of the opinion that the "
        "quotation is not on. quote_not_found: one or two words of the rendered "
        "quotation replaced from the generator's own near-synonym table "
        "(`MISQUOTE_SYNONYMS`: statute/enactment, decision/ruling, "
        "consider/weigh, ...; checked not to occur in the opinion), or (~15%) a "
        "quotation written for this benchmark that occurs in no stored opinion. "
        "proposition_not_supported: one phrase replaced from the generator's own "
        "flip table (`FLIPS`: a change of party or decision-maker "
        "petitioner/respondent, the jury/the judge, employer/employee; of "
        "quantity all/some, at least/at most, two/three; of time prior/"
        "subsequent; of place or scope public/private, within/outside, facial/"
        "as-applied; of condition if/unless, only if/even if; of degree "
        "often/rarely, substantial/minimal; of standard de novo/for abuse of "
        "discretion, strict scrutiny/rational-basis review, knowingly/"
        "negligently; of outcome rejected/accepted; of source of law Fourth/"
        "Fifth Amendment, Due Process/Equal Protection Clause; never a negation "
        "added or dropped) or (~30%, more where a holding has no phrase of the "
        "table) a holding from another opinion's syllabus.\n"
        "- **Split rule**: an opinion goes to dev when the first 48 bits of "
        f"sha1(opinion id) / 2^48 < {DEV_SHARE}, else test; absent pool entries "
        "by the same hash of their citation. Excerpts of a split cite only that "
        "split's opinions and pool entries, so no opinion is cited in both splits "
        "(fabricated cites derive from a case of the same split; mismatch names "
        "come from the same split).\n"
    )
    lines.append("## What a checker will find hard\n")
    lines.append(
        "- Slip citations have no U.S. page (`561 U. S. ___, ___`) or no pincite "
        "in U.S. pages; pincites must be read as slip pages of the lead opinion. "
        "`Name, slip op., at N` is not parsed by eyecite.\n"
        "- Absent citations (index-only U.S. cases, F.2d/F.3d/state cites from "
        "briefs, some pre-1946 U.S. cites outside the index) are correct and must "
        "not be flagged; the index ends at vol. 579 and has no text.\n"
        "- In-range non-existent U.S. cites fall inside another real case's pages "
        "(a page lookup that tolerates pincites will wrongly resolve them).\n"
        "- Quotations with ellipses, brackets or case changes are correct; "
        "misquotes differ by one or two near-synonyms only.\n"
        "- Propositions are syllabus text lightly rewritten; an unsupported one "
        "differs by one replaced phrase (or comes from another case of the same "
        "split).\n"
        "- `Id.`/`supra` forms of a fabricated or mismatched case carry the same "
        "label though their own text has no wrong element.\n"
        "- Syllabus-based holdings are supported by the syllabus, which is not "
        "part of `text` in opinions.jsonl.\n"
        "- Rule-based flips can occasionally leave a proposition that is still "
        "arguably true (e.g. a flipped word inside a subordinate clause); labels "
        "are by construction.\n"
        "- A correct case cited for a syllabus holding carries no pincite; "
        "AuthoritySpoke quotations carry none either (no page markers).\n"
        "- Brief-derived absent cites are taken as the briefs give them; a typo "
        "in a real brief would be labelled correct here (the paper's Table A1 "
        "found such typos). `us_mid_case` fabrications are pages between two "
        "consecutive SCDB case starts; material SCDB does not list (orders, "
        "in-chambers opinions) is printed after the cases of a volume, so these "
        "pages start no case.\n"
    )
    lines.append("## What this benchmark can and cannot show\n")
    lines.append(
        "- **It is synthetic, built from the checker's own sources.** The "
        "excerpts cite the same `opinions.jsonl` and `us_citation_index.jsonl` "
        "the checker reads. Every cited case that should exist is in that store "
        "or index, so the existence, case-name and pincite checks are measured "
        "against a store that holds every cited case (and its pages); real "
        "briefs give no such store, so those checks score higher here than "
        "they can be expected to on real briefs.\n"
        "- **Its prose is template text.** The sentences around each citation "
        "come from a few templates, quotations are whole opinion sentences and "
        "propositions are syllabus sentences with one phrase replaced; real "
        "briefs paraphrase, combine holdings and cite for reasons a template "
        "does not reproduce.\n"
        "- **Its figures cannot be set beside the LePhantomCite paper's** (F1 "
        "0.605 there): the paper measures real briefs with citations checked "
        "against CourtListener; here the data, the way the hallucinations were "
        "made and the case store all differ.\n"
        "- **Its vocabulary is written apart from the checker's.** The flip and "
        "misquote tables share no pair with the checker's proposition rule "
        "(`citations/restatement.py`, reused by `citations/silver.py`) or its "
        "word lists, and no flip adds or drops a negation (which that rule "
        "reads as a contrary). Measured when the tables were written (issue 26): "
        "0 of 100 flip pairs and 0 of 98 misquote pairs are an opposite, a "
        "prefix opposite or a negation the checker knows or a word of its lists, "
        "and the checker's rules decide (or make as silver negatives) 0 of the "
        "1,413 dev propositions the flips change. In the tables they replace, "
        "27 of 34 antonym pairs were such (22 read as a contrary by the "
        "proposition rule) and 10 of 102 synonym pairs, and the rules decided "
        "or made 2,128 of 2,748 flipped dev propositions. A verbatim "
        "quotation check can still find every misquote by construction (a "
        "misquotation has a word that is not the opinion's).\n"
        "- **What the scorer saw.** `bench_citations.py` trains its proposition "
        "scorer on silver pairs of the opinions the dev excerpts cite only; it "
        "starts from the starter scorer, which `make setup` builds from "
        "`opinions.jsonl`, the opinions the test excerpts cite included "
        "(extraction silver pairs of their text, not propositions). A scored "
        "figure is therefore transductive in that sense; the rules-only figure "
        "(`no_scorer`) trains on nothing.\n"
    )
    lines.append("## Scoring\n")
    lines.append(
        "Match claims to truth spans by overlap within an excerpt. A "
        "checker should flag exactly the instances with a non-null "
        "`hallucination`; `absent` instances with a null label are the false-"
        "positive trap of the paper's Section 4.3. Tune on dev, report test.\n"
    )
    if notes:
        lines.append("## Records not cited\n")
        lines.append("- records without a reporter citation or case name")
        skipped = Counter(notes.values())
        for k, v in sorted(skipped.items()):
            lines.append(f"- {v} records: {k}")
        lines.append("")
    (args.out / "README.md").write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
