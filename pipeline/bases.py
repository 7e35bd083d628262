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


def best_base(env: Mapping[str, str] = os.environ) -> tuple[str, str]:
    """(model name or folder, what it is) of the best base available.

    A folder counts only when it holds a loadable model (config, weights,
    tokenizer), so a half-written build is passed over, not loaded.
    """
    for what, variable, default in (
        ("the starter scorer", "STARTER_SCORER", STARTER),
        ("the entailment base", "NLI_BASE", NLI_BASE),
    ):
        folder = Path(env.get(variable) or default)
        if model_folder_problem(folder) is None:
            return str(folder.resolve()), what
    if env.get("NLI_MODEL"):
        return env["NLI_MODEL"], "the NLI model NLI_MODEL names"
    return (
        DEFAULT_BASE_MODEL,
        "the packaged MiniLM, which knows no entailment (make setup builds a"
        " better base)",
    )
