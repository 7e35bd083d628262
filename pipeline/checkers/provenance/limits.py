"""Bounds on the work one check may take, for a caller waiting on the answer
(the online check): what an item may ask, and a deadline looked at between
stages and batches."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ...errors import InputError, PipelineError

#: Texts embedded, or pairs scored, between two looks at the deadline: about
#: a second of work on two CPU cores.
DEADLINE_SLICE = 32


@dataclass(frozen=True)
class CheckLimits:
    """The most one item may ask of the check; None is no limit.

    ``query_chars`` bounds the question (it is repeated in every claim),
    ``claims`` the answer's sentences (each one claim, ranked against every
    context sentence and scored against its sources) and ``sentences`` the
    context sentences ranked (and the contexts, each at least one).
    """

    query_chars: int | None = None
    claims: int | None = None
    sentences: int | None = None


class LimitExceeded(InputError):
    """An item over one of its :class:`CheckLimits`; ``limit`` names the
    field."""

    def __init__(self, message: str, *, limit: str):
        self.limit = limit
        super().__init__(message)


class DeadlineExceeded(PipelineError):
    """The check ran past the deadline its caller set; nothing is returned."""


def in_time(deadline: float | None, stage: str) -> None:
    """Raises DeadlineExceeded, naming ``stage``, once ``deadline`` (a
    ``time.monotonic()``) has passed; None never passes."""
    if deadline is not None and time.monotonic() > deadline:
        raise DeadlineExceeded(f"the check ran past its deadline ({stage})")
