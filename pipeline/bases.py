"""The base a new scorer starts from: the best one this machine has.

The chain: an entailment base (the NLI cross-encoder ``NLI_MODEL`` names
where the deployment can load one, e.g.
``cross-encoder/nli-deberta-v3-base``; else the one ``train-nli`` built at
``NLI_BASE``, by default ``var/scorers/nli-base``; else the packaged
MiniLM, which knows no entailment), then the starter scorer
(``STARTER_SCORER``, by default ``var/scorers/starter``, which ``make
setup`` builds from the entailment base with silver pairs of many documents
and NLI pairs mixed in), then each project's own pairs. A zero-label scorer
trained from the bare MiniLM on real opinions flagged no better than
alignment alone (F1 0.527 against 0.521).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from .score import DEFAULT_BASE_MODEL, model_folder_problem

STARTER = Path("var") / "scorers" / "starter"
NLI_BASE = Path("var") / "scorers" / "nli-base"


def _built(env: Mapping[str, str], variable: str, default: Path) -> str | None:
    """The folder ``variable`` names (else ``default``) when it holds a
    loadable model (config, weights, tokenizer): a half-written build is
    passed over, not loaded."""
    folder = Path(env.get(variable) or default)
    return str(folder.resolve()) if model_folder_problem(folder) is None else None


def starter_scorer(env: Mapping[str, str] = os.environ) -> str | None:
    """The starter scorer's folder when it is built: the one scorer here
    trained for the task before any project exists (``check``'s default)."""
    return _built(env, "STARTER_SCORER", STARTER)


def entailment_base(env: Mapping[str, str] = os.environ) -> tuple[str, str]:
    """(model name or folder, what it is) of the best base that reads
    entailment: what the starter starts from."""
    if env.get("NLI_MODEL"):
        return env["NLI_MODEL"], "the NLI model NLI_MODEL names"
    nli_base = _built(env, "NLI_BASE", NLI_BASE)
    if nli_base is not None:
        return nli_base, "the entailment base"
    return DEFAULT_BASE_MODEL, "the packaged MiniLM, which knows no entailment"


def best_base(env: Mapping[str, str] = os.environ) -> tuple[str, str]:
    """(model name or folder, what it is) of the best base available: the
    starter when it is built, else the best entailment base."""
    starter = starter_scorer(env)
    if starter is not None:
        return starter, "the starter scorer"
    base, what = entailment_base(env)
    if base == DEFAULT_BASE_MODEL:
        what += "; make setup builds a better one, the starter scorer"
    return base, what


def base_or_best(base: str | None, env: Mapping[str, str] = os.environ) -> str:
    """``base`` when a command was given one, else the best base there is,
    said on stderr (a command's default)."""
    if base is not None:
        return base
    base, what = best_base(env)
    print(f"base: {what} ({base})", file=sys.stderr)
    return base
