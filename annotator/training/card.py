"""A scorer version as a user downloads it: its folder and a model card."""

from __future__ import annotations

import zipfile
from pathlib import Path

from annotator.core.allowlists import scorer_source_problem
from annotator.core.errors import ApplicationError
from annotator.models import ScorerModel
from pipeline.checkers import checker_class


def model_card(scorer: ScorerModel) -> str:
    """README.md of a downloaded scorer: what it is, what it was trained on,
    how good it is on the gold set, and how to load it."""
    counts = scorer.label_counts or {}
    gold_metrics = (scorer.metrics or {}).get("gold") or {}
    validation = (scorer.metrics or {}).get("validation") or {}

    def metric(m: dict, key: str) -> str:
        value = m.get(key)
        return "n/a" if value is None else f"{value:.3f}"

    def row(name: str, m: dict) -> str:
        cells = [metric(m, k) for k in ("precision", "recall", "f1")]
        return f"| {name} | {m.get('n', 0)} | " + " | ".join(cells) + " |"

    checker = checker_class(scorer.project.kind)
    card = checker.scorer_card
    premise, hypothesis = card.example
    run = f" (training run {scorer.training_run_id})" if scorer.training_run_id else ""
    expert = f"{counts.get('human_train', 'n/a')} expert"
    expert += f" ({counts.get('human_train_unsafe', 'n/a')} unsafe)"
    silver = f"{counts.get('silver', 'n/a')} silver"
    silver += f" ({counts.get('silver_unsafe', 'n/a')} unsafe)"
    return f"""---
library_name: sentence-transformers
pipeline_tag: text-classification
tags: [cross-encoder, safepassage, hallucination-detection]
base_model: {scorer.base_model}
---

# SafePassage scorer {scorer.project.name} / {scorer.version}

A cross-encoder for {checker.title.lower()}: it scores {card.reads}. A
claim whose score is below the threshold **{scorer.threshold:.4f}** is
flagged *unsafe* (not supported).

- Base model: `{scorer.base_model}`
- Registered: {scorer.created_at:%Y-%m-%d %H:%M} UTC{run}
- Expert labels (outside the gold test set): {scorer.expert_labels}
- Training pairs: {expert}, {silver};
  validation: {counts.get("validation", "n/a")}

## Evaluation (flagging unsafe claims)

| split | n | precision | recall | F1 |
| --- | --- | --- | --- | --- |
{row("gold test set", gold_metrics)}
{row("validation", validation)}

The gold test set is a fixed random slice of the project's documents whose
labels are never trained on. Metrics count the whole check: a claim its
evidence already settles is flagged or passed before the scorer runs.

## Intended use

Flagging claims their evidence does not support, in documents like the
project's, as SafePassage's check of {checker.title.lower()}. It is not a
general NLI model: it was tuned on one project's claims and documents, and
its threshold was chosen for F1 on that project's labels. Keep a human in the
loop for flagged items.

## Usage

```python
from sentence_transformers import CrossEncoder

model = CrossEncoder("path/to/this/folder")
score = model.predict([({premise!r}, {hypothesis!r})])[0]
unsafe = score < {scorer.threshold:.4f}
```

The model has one output logit; `CrossEncoder.predict` applies the sigmoid
and returns p(supports). With the SafePassage pipeline:
`pipeline.score.NLIScorer("path/to/this/folder")` reads the threshold from
`metadata.json`.
"""


def scorer_archive(scorer: ScorerModel, out) -> None:
    """Write the scorer folder plus its README.md model card as a zip to the
    binary file ``out``.

    Raises:
        ApplicationError: the folder is not on this machine (e.g. the packaged
            base model, or a worker-only volume).
    """
    problem = scorer_source_problem(scorer.path, project_id=scorer.project_id)
    if problem:
        raise ApplicationError(problem)
    folder = Path(scorer.path)
    if not folder.is_dir():
        raise ApplicationError(
            f"scorer {scorer.version}: {scorer.path!r} is not a model folder on "
            "this server (a packaged or hub model, or a folder only the workers "
            "see)"
        )
    root = f"{scorer.project.name}-{scorer.version}".replace("/", "-").replace(" ", "_")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        inside = folder.resolve()
        for path in sorted(folder.rglob("*")):
            # A link could point anywhere on the server: never follow one out.
            if not path.resolve().is_relative_to(inside):
                continue
            if path.is_file() and path.name != "README.md":
                # Weights barely compress: store them, deflate the text files.
                kind = (
                    zipfile.ZIP_STORED
                    if path.suffix in (".safetensors", ".bin")
                    else zipfile.ZIP_DEFLATED
                )
                archive.write(
                    path, f"{root}/{path.relative_to(folder)}", compress_type=kind
                )
        archive.writestr(f"{root}/README.md", model_card(scorer))
