"""Checker kinds on the app side: one subpackage per kind.

A kind's subpackage holds what it adds to the app (its runs, services,
endpoints) and a ``hook`` module whose ``HOOK`` says what core code may ask
of it. Core code reads kinds only through :func:`kind_hook`, and names none
(``tests/test_import_contract.py``).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class KindHook:
    """What a checker kind brings to the app.

    ``checker_options``: the deployment's options its checker is built with,
    each made only when a check needs it (a case-law store, say).
    """

    kind: str
    checker_options: Mapping[str, Callable[[], Any]] = field(default_factory=dict)


@functools.cache
def kind_hooks() -> dict[str, KindHook]:
    """Every kind's hook, by kind: those of the subpackages that have one."""
    hooks = {}
    for info in pkgutil.iter_modules(__path__):
        name = f"{__name__}.{info.name}.hook"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
            continue
        hooks[module.HOOK.kind] = module.HOOK
    return hooks


def kind_hook(kind: str) -> KindHook:
    """The hook of ``kind``; an empty one for a kind that brings nothing."""
    return kind_hooks().get(kind) or KindHook(kind=kind)
