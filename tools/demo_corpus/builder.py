"""Writing a document piece by piece while recording where its entities are."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass
class Mention:
    """An entity written into the document at ``start:end``; the context of a
    claim about it may begin as early as ``cue_start`` (its label)."""

    type: str
    value: Any
    start: int
    end: int
    cue_start: int
    ocr_at: int | None = None  # a space the "scanner" put inside the surface


@dataclass
class Slot:
    """An entity to be written into a template: ``prefix`` then ``surface``."""

    surface: str
    type: str
    value: Any
    cue: str | None = None
    prefix: str = ""


class Builder:
    """Appends text; ``ent`` also records a :class:`Mention`, splitting a word
    of it like a scanner would for a share ``ocr_rate`` of entities."""

    def __init__(self, rng: random.Random, ocr_rate: float):
        self.rng = rng
        self.ocr_rate = ocr_rate
        self.parts: list[str] = []
        self.pos = 0
        self.mentions: list[Mention] = []

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.pos += len(text)

    def ent(
        self, surface: str, type_: str, value: Any, *, cue: str | None = None
    ) -> None:
        start = self.pos
        cue_start = start
        if cue:
            recent = "".join(self.parts[-8:])
            found = recent.rfind(cue)
            if found >= 0 and len(recent) - found <= 90:
                cue_start = start - (len(recent) - found)
        ocr_at = None
        if self.ocr_rate and self.rng.random() < self.ocr_rate:
            cut = ocr_cut(surface, self.rng)
            if cut is not None:
                surface = surface[:cut] + " " + surface[cut:]
                ocr_at = start + cut
        self.add(surface)
        self.mentions.append(Mention(type_, value, start, self.pos, cue_start, ocr_at))

    def fill(self, template: str, slots: dict[str, Any]) -> None:
        """Write ``template``; ``{name}`` takes text or a :class:`Slot`."""
        for i, piece in enumerate(_PLACEHOLDER.split(template)):
            if i % 2 == 0:
                self.add(piece)
                continue
            slot = slots[piece]
            if isinstance(slot, Slot):
                self.add(slot.prefix)
                self.ent(slot.surface, slot.type, slot.value, cue=slot.cue)
            else:
                self.add(slot)

    def text(self) -> str:
        return "".join(self.parts)


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def ocr_cut(surface: str, rng: random.Random) -> int | None:
    """Where a scanner might split a word of ``surface``, or ``None``."""
    words = [m for m in re.finditer(r"[^\W\d_]{5,}", surface)]
    if not words:
        return None
    word = rng.choice(words)
    return word.start() + rng.randint(1, len(word.group()) - 2)


def person(rng: random.Random, first: Sequence[str], last: Sequence[str]) -> dict:
    return {"first_name": rng.choice(first), "last_name": rng.choice(last)}


def full_name(name: dict) -> str:
    return f"{name['first_name']} {name['last_name']}"


def split_article(org: str) -> tuple[str, str]:
    """``"the National Police"`` -> ``("the ", "National Police")``."""
    return ("the ", org[4:]) if org.startswith("the ") else ("", org)
