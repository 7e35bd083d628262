"""What an opinion's own sentence says of a proposition that restates it.

Briefs often restate a holding almost word for word ("The Court held that
..."). Where a sentence of the passage and the proposition differ only in
framing words, the passage states the proposition; where they differ only
by a negation added or dropped, or a word swapped for its opposite
(``protected`` / ``unprotected``, ``affirmed`` / ``reversed``), it states the
contrary. Anything else is the scorer's to judge.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Literal

Restated = Literal["states", "contradicts"]

#: Words whose swap turns a holding into its opposite.
OPPOSITES = {
    word: opposite.replace("_", " ")
    for word, opposite in (
        pair.split("=")
        for pair in """
    affirmed=reversed constitutional=unconstitutional valid=invalid lawful=unlawful
    permits=prohibits permitted=prohibited allows=forbids allowed=forbidden
    requires=does_not_require granted=denied grant=deny includes=excludes
    included=excluded liable=immune guilty=innocent reasonable=unreasonable
    sufficient=insufficient applies=does_not_apply before=after more=less broad=narrow
    federal=state plaintiff=defendant majority=minority upheld=struck_down
    consistent=inconsistent adequate=inadequate timely=untimely
    preempts=does_not_preempt mandatory=discretionary civil=criminal express=implied
    voluntary=involuntary exclusive=concurrent prospective=retroactive
""".split()
    )
}
OPPOSITES |= {v: k for k, v in list(OPPOSITES.items()) if " " not in v}

_WORD = re.compile(r"[a-z0-9§]+(?:['’][a-z]+)?")
_SENTENCE = re.compile(r"(?<=[.?!;:])\s+")
_NEGATIONS = frozenset({"not", "no", "never", "cannot", "n't", "nor", "without"})
# Words a brief adds around a holding it restates.
_FRAMING = frozenset(
    "the court held holds hold that explained explains noted notes further also has "
    "recognized recognizes concluded concludes found finds observed stated states "
    "and here this case in it we our a an of".split()
)
_PREFIXES = ("un", "in", "im", "il", "ir", "non", "dis")
# How much of the proposition a sentence must share to be its restatement.
_MIN_SIMILARITY = 0.75
_MIN_WORDS = 5
# Words of the sentence a restatement may leave out.
_MAX_DROPPED = 2


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("’", "'"))


def _opposite(a: str, b: str) -> bool:
    if OPPOSITES.get(a) == b or OPPOSITES.get(b) == a:
        return True
    return any(a == p + b or b == p + a for p in _PREFIXES)


def _judge(claim: list[str], sentence: list[str]) -> Restated | None:
    """Compare a proposition with one sentence: the proposition may add
    framing words and leave out a few of the sentence's (a name's
    modifiers); a negation or an opposite word turns it."""
    matcher = SequenceMatcher(a=sentence, b=claim, autojunk=False)
    if matcher.ratio() < _MIN_SIMILARITY:
        return None
    turned, dropped = False, 0
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            continue
        removed, added = sentence[a0:a1], claim[b0:b1]
        changed = set(removed) ^ set(added)
        if changed and changed <= _NEGATIONS:
            turned = True
        elif len(removed) == len(added) == 1 and _opposite(removed[0], added[0]):
            turned = True
        elif not set(added) <= _FRAMING:
            return None
        else:
            dropped += len(set(removed) - _FRAMING)
            if dropped > _MAX_DROPPED or set(removed) & _NEGATIONS:
                return None
    return "contradicts" if turned else "states"


def restatement(proposition: str, passage: str) -> Restated | None:
    """Whether a sentence of ``passage`` states ``proposition`` in other
    framing (``states``), states its contrary by one negation or opposite
    word (``contradicts``), or neither (None)."""
    claim = _words(proposition)
    if len(claim) < _MIN_WORDS:
        return None
    verdicts = {_judge(claim, _words(s)) for s in _SENTENCE.split(passage)}
    # A passage that states it settles it, whatever another sentence says.
    for v in ("states", "contradicts"):
        if v in verdicts:
            return v
    return None
