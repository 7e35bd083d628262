"""What a training run learns from: the project's expert labels (gold set
kept apart), silver pairs made from its claims, and LLM-graded ones."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from typing import Any

from django.conf import settings
from django.db.models import Count, Q

from annotator.claims.records import claim_record, document_record
from annotator.labeling import gold
from annotator.models import (
    Adjudication,
    Claim,
    Document,
    Label,
    Project,
)
from annotator.runs.grading import grader_silver_labels
from pipeline import __version__
from pipeline.checkers import Example
from pipeline.jsonl import label_from_json


def expert_labels(project: Project, *, gold_set: bool) -> dict[int, str]:
    """One label per claim, from the decisive (safe/unsafe) decisive.

    Experts who disagree are settled by a reviewer's adjudication where there
    is one (:mod:`.adjudication`), else by majority, a tie counting as unsafe:
    one expert saw a problem, and a missed hallucination costs more than a
    flag (the item waits in the reviewers' queue meanwhile). ``unsure``
    labels are ignored. ``gold_set`` picks the gold test set's claims
    (True) or the training side (False).
    """
    decisive = gold.restrict(
        Label.objects.filter(claim__project=project, label__in=Label.DECISIVE),
        project,
        gold=gold_set,
        document_field="claim__document_id",
    )
    rows = (
        decisive.order_by()  # Meta.ordering would join the GROUP BY
        .values("claim_id")
        .annotate(
            safe=Count("pk", filter=Q(label=Label.Value.SAFE)),
            unsafe=Count("pk", filter=Q(label=Label.Value.UNSAFE)),
        )
    )
    labels = {
        r["claim_id"]: "safe" if r["safe"] > r["unsafe"] else "unsafe" for r in rows
    }
    decisions = gold.restrict(
        Adjudication.objects.filter(claim__project=project),
        project,
        gold=gold_set,
        document_field="claim__document_id",
    )
    labels.update(decisions.values_list("claim_id", "label"))
    return labels


@dataclass
class LabelledData:
    """Pipeline records for one side of the gold split."""

    documents: dict[str, Any]
    claims: list[Any]
    labels: dict[str, Any]
    pool_key: str = ""


def labelled_data(
    project: Project, *, gold_set: bool, labelled_only: bool = False
) -> LabelledData:
    """Documents, claims and expert labels of one side of the gold split,
    as the pipeline's records (ids are database ids, as in the check).

    ``pool_key`` hashes what silver pairs are made from (documents,
    claims, schema), not the labels: it names the silver cache.
    """

    labels = expert_labels(project, gold_set=gold_set)
    claims_qs = gold.restrict(
        Claim.objects.filter(project=project), project, gold=gold_set
    ).order_by("pk")
    if labelled_only:
        claims_qs = claims_qs.filter(pk__in=list(labels))
    digest = hashlib.sha256()
    digest.update(json.dumps(project.options, sort_keys=True).encode())
    claims = []
    # Every field claim_record reads: a deferred one costs a query a row.
    rows = claims_qs.only("pk", "document_id", "data", "model", "extra").iterator(
        chunk_size=2000
    )
    for row in rows:
        claims.append(claim_record(row, project.kind))
        digest.update(
            json.dumps([row.pk, row.document_id, row.data], sort_keys=True).encode()
        )
    document_ids = {int(p.document_id) for p in claims}
    documents = {}
    for row in (
        Document.objects.filter(pk__in=document_ids)
        .order_by("pk")
        .only("pk", "text", "metadata")
        .iterator(chunk_size=500)
    ):
        documents[str(row.pk)] = document_record(row)
        text_hash = hashlib.sha256(row.text.encode()).hexdigest()
        digest.update(f"{row.pk}:{text_hash}".encode())
        if row.metadata:
            # What some kinds check besides the text (a RAG item's query).
            digest.update(json.dumps(row.metadata, sort_keys=True).encode())
    return LabelledData(
        documents=documents,
        claims=claims,
        labels={
            str(pk): label_from_json({"claim_id": str(pk), "label": label})
            for pk, label in labels.items()
        },
        pool_key=digest.hexdigest()[:32],
    )


def silver_cached(project: Project, data: LabelledData, config, checker, log):
    """The silver pairs the project's checker makes of the training-side pool,
    from VAR_DIR/silver when the pool (and what shapes the pairs: the seed,
    the kind and its evidence threshold) has not changed."""

    threshold = project.evidence_threshold()
    shape = f"{config.seed}:{project.kind}:{threshold}:{__version__}"
    key = hashlib.sha256(f"{data.pool_key}:{shape}".encode()).hexdigest()[:24]
    folder = settings.VAR_DIR / "silver" / f"project-{project.pk}"
    path = folder / f"{key}.json"
    if path.is_file():
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
            examples = [Example(*row) for row in rows]
            log(f"silver pairs: {len(examples)} from the cache ({path.name})")
            return examples
        except (OSError, ValueError, TypeError) as e:
            log(f"silver cache unreadable ({e}); making the pairs again")
    started = time.monotonic()
    examples = checker.silver_examples(data.claims, seed=config.seed)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(
        json.dumps([list(asdict(e).values()) for e in examples]), encoding="utf-8"
    )
    tmp.replace(path)  # atomic: a concurrent reader sees all or nothing
    for old in folder.glob("*.json"):
        if old != path:
            old.unlink(missing_ok=True)
    log(
        f"silver pairs: {len(examples)} made from {len(data.claims)} "
        f"claims in {time.monotonic() - started:.0f} s (cached)"
    )
    return examples


def graded_examples(project: Project, data: LabelledData, checker, log):
    """The LLM grader's verdicts (grading runs) on the training side's
    unlabelled claims, as silver pairs the scorer reads like any other."""

    graded = {str(pk): label for pk, label in grader_silver_labels(project).items()}
    if not graded:
        return []
    pairs = checker.training_pairs(data.claims, only=graded)
    examples = [
        Example(
            p.premise,
            p.hypothesis,
            graded[p.claim_id] == "safe",
            p.document_id,
            "silver:llm",
        )
        for p in pairs
        if p.scored
    ]
    log(f"silver pairs: {len(examples)} from the LLM grader's verdicts")
    return examples
