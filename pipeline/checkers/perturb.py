"""Edits of a true sentence for the silver pairs of every checker: an
auxiliary negated (or un-negated), an entity or number swapped for another
of its kind (false), a part it says something without dropped (still true)."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence

_NEGATABLE = re.compile(
    r"\b(is|are|was|were|does|did|do|may|must|can|could|should|has|have|had|will"
    r"|would)( not)?\b"
)
# Numbers (years among them) and runs of capitalised words, which may hold
# "of", "the", "de"... between them ("Bank of Scotland").
_NUMBER = re.compile(r"\b\d[\d,.]*\d\b|\b\d\b")
# A word keeps a full stop only inside it ("U.S.A"), so a name never runs
# into the next sentence.
_WORD = r"[A-Z](?:[\w'’-]|\.(?=\w))*"
_NAME = re.compile(rf"\b{_WORD}(?:[ \t]+(?:(?:of|the|de|van|von|and)[ \t]+)?{_WORD})*")

_WORDS = re.compile(r"\w+")
_MONTH = re.compile(
    r"\b(?:January|February|March|April|May|June|July|August|September|October"
    r"|November|December)\b"
)


def negatable(sentence: str) -> list[re.Match]:
    """The auxiliaries of ``sentence`` that :func:`negate` may flip."""
    return list(_NEGATABLE.finditer(sentence))


def negate(sentence: str, rng: random.Random) -> str | None:
    """``sentence`` with one auxiliary negated, or its "not" dropped; None if
    it has no auxiliary."""
    auxes = negatable(sentence)
    if not auxes:
        return None
    m = rng.choice(auxes)
    flipped = m.group(1) if m.group(2) else f"{m.group(1)} not"
    return sentence[: m.start()] + flipped + sentence[m.end() :]


def entities(text: str) -> list[tuple[str, str]]:
    """``(kind, text)`` of each number and capitalised name in ``text``;
    kinds are ``month``, ``year``, ``number`` and ``name``. A capitalised word that
    only opens a sentence is not a name."""
    out = []
    for m in _MONTH.finditer(text):
        out.append(("month", m.group()))
    for m in _NUMBER.finditer(text):
        value = m.group()
        kind = "year" if re.fullmatch(r"1[5-9]\d\d|20\d\d", value) else "number"
        out.append((kind, value))
    for m in _NAME.finditer(text):
        opens_sentence = re.search(r"(?:^|[.!?]\s+)$", text[: m.start()])
        if (opens_sentence and " " not in m.group()) or _MONTH.fullmatch(m.group()):
            continue
        out.append(("name", m.group()))
    return out


def swap_entity(
    sentence: str,
    pool: Mapping[str, Sequence[str]],
    rng: random.Random,
    *,
    avoid: str = "",
) -> str | None:
    """``sentence`` with one of its entities replaced by another of the same
    kind from ``pool`` that neither it nor ``avoid`` (the premise) contains;
    None when nothing can be swapped."""
    found = entities(sentence)
    rng.shuffle(found)
    folded = (sentence + " " + avoid).lower()
    for kind, value in found:
        options = [v for v in pool.get(kind, ()) if v.lower() not in folded]
        if options:
            return replaced(sentence, value, rng.choice(options))
    return None


def replaced(text: str, old: str, new: str) -> str:
    """``text`` with the first ``old`` in it replaced by ``new``."""
    at = text.find(old)
    return text[:at] + new + text[at + len(old) :]


# Parts a sentence still says something without: a parenthesis, a clause
# set off by commas, a leading adverbial before a comma, a trailing phrase after
# the last comma.
_DROPPABLE = (
    re.compile(r"\s*\([^)]*\)"),
    re.compile(r",\s*(?:who|which|where|whose|when)\b[^,]*,"),
    re.compile(
        r"^(?:In|On|At|After|Before|During|Since|By|From|Following|Although|While"
        r"|When|However|Today|Later|Originally)\b[^,]{0,40},\s*"
    ),
    re.compile(r",[^,]*(?=\.$)"),
)


def shortened(sentence: str, rng: random.Random) -> str:
    """The sentence, or (half the time) the sentence without one part it
    still says something without, so that supported claims are not all
    verbatim copies."""
    if rng.random() < 0.5:
        return sentence
    options = []
    for pattern in _DROPPABLE:
        short = pattern.sub("", sentence, count=1)
        if short != sentence and len(_WORDS.findall(short)) >= 5:
            options.append(short[0].upper() + short[1:])
    return rng.choice(options) if options else sentence
