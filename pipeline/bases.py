"""The base a new scorer starts from: the best one this machine has.

Best first: the starter scorer (``STARTER_SCORER``, by default
``var/scorers/starter``, which ``make setup`` builds: silver pairs of many
documents), the entailment base (``NLI_BASE``, by default
``var/scorers/nli-base``: ``train-nli`` on human-labelled NLI pairs), the
NLI cross-encoder named by ``NLI_MODEL`` where the deployment can load one
(e.g. ``cross-encoder/nli-deberta-v3-base``), and last the packaged MiniLM,
which knows no entailment: a zero-label scorer trained from it on real
opinions flagged no better than alignment alone (F1 0.527 against 0.521).
"""

from __future__ import annotations

import os
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


def best_base(env: Mapping[str, str] = os.environ) -> tuple[str, str]:
    """(model name or folder, what it is) of the best base available."""
    starter = starter_scorer(env)
    if starter is not None:
        return starter, "the starter scorer"
    nli_base = _built(env, "NLI_BASE", NLI_BASE)
    if nli_base is not None:
        return nli_base, "the entailment base"
    if env.get("NLI_MODEL"):
        return env["NLI_MODEL"], "the NLI model NLI_MODEL names"
    return (
        DEFAULT_BASE_MODEL,
        "the packaged MiniLM, which knows no entailment (make setup builds a"
        " better base)",
    )
