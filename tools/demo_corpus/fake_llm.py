"""A fake black-box LLM: what it predicts for one document's entities, safe or
unsafe at the rates of its :class:`ModelProfile`, and the gold label of each."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from pipeline.types import Claim, Label, LabelValue

from .builder import Mention, full_name
from .contexts import Window, Words, mistranscribe, span_text, window
from .mistakes import hallucinate, other_value, supports
from .spec import (
    CONFUSABLE,
    FAMILY,
    MISTRANSCRIPTION_KINDS,
    UNSAFE_KINDS,
    ModelProfile,
)


def _weighted_order(
    kinds: Sequence[str], weights: Sequence[float], rng: random.Random
) -> list[str]:
    """``kinds`` in a random order, heavier ones likelier to come first."""
    keyed = [
        (rng.random() ** (1.0 / w), k)
        for k, w in zip(kinds, weights, strict=True)
        if w > 0
    ]
    return [k for _, k in sorted(keyed, reverse=True)]


# Weigh MISTRANSCRIPTION_KINDS in order.
_MISTRANSCRIPTION_WEIGHTS = (0.2, 0.15, 0.15, 0.15, 0.1, 0.25)


class DocumentPredictor:
    """Makes one fake LLM's claims for one document."""

    def __init__(
        self,
        text: str,
        mentions: list[Mention],
        targets: Sequence[str],
        profile: ModelProfile,
        rng: random.Random,
    ):
        self.text = text
        self.words = Words(text)
        self.mentions = mentions
        self.targets = targets
        self.profile = profile
        self.rng = rng

    def mistranscribed(self, m: Mention, w: Window) -> tuple[str, str]:
        rng = self.rng
        for kind in _weighted_order(
            MISTRANSCRIPTION_KINDS, _MISTRANSCRIPTION_WEIGHTS, rng
        ):
            context = mistranscribe(kind, self.words, w, m, rng)
            if context is not None and context != span_text(
                self.words, w.first, w.last
            ):
                return kind, context
        return "exact", span_text(self.words, w.first, w.last)

    def safe(self, m: Mention) -> tuple[Any, str, dict[str, Any]]:
        w = window(self.words, m, self.rng)
        if self.rng.random() < self.profile.mistranscription_rate:
            kind, context = self.mistranscribed(m, w)
        else:
            kind, context = "exact", span_text(self.words, w.first, w.last)
        return m.value, context, {"kind": kind}

    def _surface(self, m: Mention, extra: dict[str, Any]) -> str:
        w = window(self.words, m, self.rng)
        if self.rng.random() < self.profile.mistranscription_rate / 2:
            kind, context = self.mistranscribed(m, w)
            if kind != "exact":
                extra["mistranscription"] = kind
            return context
        return span_text(self.words, w.first, w.last)

    def unsafe(self, kind: str, m: Mention) -> tuple[Any, str, dict] | None:
        rng = self.rng
        extra: dict[str, Any] = {"kind": kind}
        if kind == "hallucinated_context":
            value, context = hallucinate(m.type, m.value, rng)
            if context.lower() in self.text.lower():
                return None
            return value, context, extra
        if kind == "bad_grounding":
            others = [o for o in self.mentions if o.type != m.type]
            rng.shuffle(others)
            for o in others[:6]:
                context = self._surface(o, extra)
                if not supports(m.type, m.value, context):
                    return m.value, context, extra
            return None
        if kind == "incorrect_entity":
            sources = [o for o in self.mentions if o.type in CONFUSABLE.get(m.type, ())]
            if not sources:
                return None
            o = rng.choice(sources)
            value = o.value
            if FAMILY[m.type] == "text" and FAMILY[o.type] == "name":
                value = full_name(o.value)
            elif FAMILY[m.type] != FAMILY[o.type]:
                return None
            if value == m.value and o.type in self.targets:
                return None  # e.g. a decision date on the day of the hearing
            return value, self._surface(o, extra), extra
        if kind == "wrong_value":
            doc_values = [o.value for o in self.mentions if o.type == m.type]
            for _ in range(4):
                value = other_value(m.type, m.value, rng, doc_values)
                if value in doc_values and FAMILY[m.type] != "text":
                    continue
                context = self._surface(m, extra)
                if value != m.value and not self._states(m.type, value, context):
                    return value, context, extra
            return None
        raise ValueError(f"unknown kind {kind!r}")

    def _states(self, type_: str, value: Any, context: str) -> bool:
        family = FAMILY[type_]
        low = context.lower()
        if family == "text":
            return value.lower() in low
        if family == "name":
            return full_name(value).lower() in low
        if family == "date":
            # Another date of the same type inside the window would make it true.
            start = self.text.lower().find(low)
            return any(
                o.value == value
                for o in self.mentions
                if o.type == type_
                and start >= 0
                and start <= o.start < start + len(low)
            )
        return supports(type_, value, context) and value.lower() in low

    def predict(self, doc_id: str, model: str) -> tuple[list[Claim], list[Label]]:
        rng = self.rng
        by_type: dict[str, list[Mention]] = {}
        for m in self.mentions:
            if m.type in self.targets:
                by_type.setdefault(m.type, []).append(m)
        chosen = [rng.choice(by_type[t]) for t in self.targets if t in by_type]
        rest = [m for t in self.targets for m in by_type.get(t, []) if m not in chosen]
        rng.shuffle(rest)
        chosen += rest[: max(rng.randint(8, 12) - len(chosen), 0)]
        order = {t: i for i, t in enumerate(self.targets)}
        chosen.sort(key=lambda m: (order[m.type], m.start))
        claims, labels = [], []
        for j, m in enumerate(chosen):
            made = None
            if rng.random() < self.profile.unsafe_rate:
                for kind in _weighted_order(
                    UNSAFE_KINDS, self.profile.unsafe_weights, rng
                ):
                    made = self.unsafe(kind, m)
                    if made is not None:
                        break
            label: LabelValue = "unsafe" if made is not None else "safe"
            value, context, extra = made if made is not None else self.safe(m)
            pid = f"{doc_id}-p{j:02d}"
            claims.append(
                Claim(
                    id=pid,
                    document_id=doc_id,
                    type=m.type,
                    value=value,
                    context=context,
                    model=model,
                    extra=extra,
                )
            )
            labels.append(
                Label(claim_id=pid, label=label, extra={"kind": extra["kind"]})
            )
        return claims, labels
