"""Checkers by kind: one subpackage per kind of LLM output, behind
:class:`~pipeline.checkers.base.Checker`.

A checker class registers itself under its ``kind``; callers (the CLI, the
web app's ``Project.kind``) look it up with :func:`checker_class`.
"""

from __future__ import annotations

from typing import Any, TypeVar

from .base import (
    Checker,
    CheckResult,
    Evidence,
    Example,
    Finding,
    ItemFormat,
    Pair,
    TakesItems,
)

_REGISTRY: dict[str, type[Checker[Any]]] = {}

_C = TypeVar("_C", bound="type[Checker[Any]]")


def register(cls: _C) -> _C:
    """Class decorator: make ``cls`` the checker of ``cls.kind``.

    Raises:
        ValueError: another class already holds that kind.
    """
    kind = cls.kind
    if _REGISTRY.get(kind, cls) is not cls:
        raise ValueError(f"checker kind {kind!r} is already {_REGISTRY[kind]!r}")
    _REGISTRY[kind] = cls
    return cls


def checker_class(kind: str) -> type[Checker[Any]]:
    """The checker class registered under ``kind``.

    Raises:
        KeyError: no checker of that kind (the message lists the known ones).
    """
    _load_builtin()
    try:
        return _REGISTRY[kind]
    except KeyError:
        raise KeyError(
            f"no checker of kind {kind!r}; known: {', '.join(sorted(_REGISTRY))}"
        ) from None


def kinds() -> list[str]:
    """The kinds registered, built-in ones included."""
    _load_builtin()
    return sorted(_REGISTRY)


def item_format(kind: str) -> ItemFormat | None:
    """How the checker of ``kind`` reads its items
    (:class:`~pipeline.checkers.base.TakesItems`); None for a checker that
    takes documents and claims apart.

    Raises:
        KeyError: no checker of that kind.
    """
    return getattr(checker_class(kind), "item_format", None)


def _load_builtin() -> None:
    # Imported on first use: a checker's module may pull heavy dependencies.
    from . import citations, consistency, extraction, provenance  # noqa: F401


__all__ = [
    "Checker",
    "CheckResult",
    "Evidence",
    "Example",
    "Finding",
    "ItemFormat",
    "Pair",
    "TakesItems",
    "checker_class",
    "item_format",
    "kinds",
    "register",
]
