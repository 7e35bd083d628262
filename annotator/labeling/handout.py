"""What the labeling page hands an expert for each claim: the claim, its
excerpt of the document, the why, and the scores the expert may see."""

from __future__ import annotations

import json
import re
from typing import Any

from django.db import connection

from annotator.claims import pdfs, records
from annotator.labeling import gold as gold_set
from annotator.labeling import guidelines
from annotator.labeling.queue import CLAIM_COLUMN, is_overlap
from annotator.models import (
    Claim,
    ClaimScore,
    Document,
    Label,
    Project,
    Reason,
    Verdict,
    verdict_text,
)
from pipeline.checkers import checker_class

WINDOW_CHARS = 400
#: How far a window's cut may move to land on a line or word boundary.
WINDOW_SLACK = 80
MAX_SIBLINGS = 50


# The statements of a hand-out's items, written out and composed once: the
# ORM took longer to build them than Postgres to run them, and every hand-out
# and labeling page runs all three. A claim's anchor is where its deciding
# evidence starts or ends in its own document; null when the evidence is
# elsewhere (another source) or absent. The labeling window and the order of
# a document's claims follow it.
_CLAIM = Claim._meta.db_table
_DOCUMENT = Document._meta.db_table
_LABEL = Label._meta.db_table
_ANCHORS = """
    CROSS JOIN LATERAL (SELECT
        CASE WHEN c.evidence #>> '{0,source}' = d.external_id
            THEN (c.evidence #>> '{0,start}')::integer END AS anchor_start,
        CASE WHEN c.evidence #>> '{0,source}' = d.external_id
            THEN (c.evidence #>> '{0,end}')::integer END AS anchor_end
    ) a"""
# The window WINDOW_SLACK characters wider on each side, for _excerpt to cut
# at a line or word boundary. A PDF's page table comes with each row rather
# than in a query of its own: a long PDF's is a few kilobytes.
_ITEMS_SQL = f"""
    SELECT c.id AS pk, c.external_id, c.model, c.data, c.hypothesis, c.premise,
        c.evidence, c.evidence_score, c.details, c.document_id, c.score,
        c.scored_by, c.verdict, c.reason, c.uncertainty, a.anchor_start,
        a.anchor_end, w.raw_start,
        substr(d.text, w.raw_start + 1, w.raw_end - w.raw_start) AS raw_text,
        length(d.text) AS document_length,
        d.external_id AS document_external_id,
        d.metadata -> 'pages' AS document_pages
    FROM {_CLAIM} c JOIN {_DOCUMENT} d ON d.id = c.document_id {_ANCHORS}
    CROSS JOIN LATERAL (SELECT
        greatest(coalesce(a.anchor_start, 0) - {WINDOW_CHARS + WINDOW_SLACK}, 0)
            AS raw_start,
        greatest(coalesce(a.anchor_end, 0) + {WINDOW_CHARS}, {2 * WINDOW_CHARS})
            + {WINDOW_SLACK} AS raw_end
    ) w
    WHERE c.project_id = %s AND c.id = ANY(%s::bigint[])"""
# A document's claims in anchor order; the data only to render a hypothesis
# the check has not stored yet. The documents are named on both sides of the
# join: with the claims' side alone, the planner hashed every document of the
# table to join the batch's few (0.8 of the statement's 1.3 ms at 2,000).
_SIBLINGS_SQL = f"""
    SELECT c.id AS pk, c.document_id, c.hypothesis,
        CASE WHEN c.hypothesis = '' THEN c.data END AS unrendered
    FROM {_CLAIM} c JOIN {_DOCUMENT} d ON d.id = c.document_id {_ANCHORS}
    WHERE c.document_id = ANY(%(documents)s::bigint[])
        AND d.id = ANY(%(documents)s::bigint[])
    ORDER BY c.document_id, a.anchor_start, c.id"""
_MY_LABELS_SQL = f"""
    SELECT l.{CLAIM_COLUMN} AS claim_id, l.label, l.client_id, l.note,
        l.correction, l.suggestion
    FROM {_LABEL} l JOIN {_CLAIM} c ON c.id = l.{CLAIM_COLUMN}
    WHERE l.annotator_id = %s AND c.document_id = ANY(%s::bigint[])"""


def _rows(
    sql: str,
    params: list[Any] | dict[str, Any],
    *,
    json_columns: frozenset[str],
) -> list[dict[str, Any]]:
    """The statement's rows as dicts, ``json_columns`` decoded (Django has
    psycopg hand jsonb over as text, for its fields to decode)."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        names = [column.name for column in cursor.description]
        rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    for row in rows:
        for name in json_columns:
            if row[name] is not None:
                row[name] = json.loads(row[name])
    return rows


def without_keys(value: Any, keys: frozenset[str]) -> Any:
    """``value`` (JSON) with every object key in ``keys`` left out, at any
    depth: a checker's details less the scorer's judgements."""
    if isinstance(value, dict):
        return {k: without_keys(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [without_keys(v, keys) for v in value]
    return value


#: How near the active threshold a score makes a verdict a close call; the
#: stored ``uncertainty`` is that distance.
CLOSE_CALL = 0.1

_WHITESPACE = re.compile(r"\s+")


def _cut_start(text: str, at: int, *, limit: int, starts_document: bool) -> int:
    """Where a window of ``text`` meant to start at ``at`` starts instead: the
    nearest line start within WINDOW_SLACK characters, else the nearest word
    start, never after ``limit`` (the evidence); ``at`` when there is none (a
    run of that many characters without a space)."""
    if at == 0 and starts_document:
        return 0
    lo, hi = max(at - WINDOW_SLACK, 0), min(at + WINDOW_SLACK, limit)
    lines: list[int] = []
    words: list[int] = []
    if lo == 0 and starts_document:
        lines.append(0)
    for run in _WHITESPACE.finditer(text, lo, hi + 1):
        i = run.end()
        if i > hi or i >= len(text) or text[i].isspace():
            continue  # cut short by the search's end: not a word start
        (lines if "\n" in run.group() else words).append(i)
    found = lines or words
    return min(found, key=lambda i: abs(i - at)) if found else at


def _cut_end(text: str, at: int, *, limit: int, ends_document: bool) -> int:
    """``_cut_start`` from the other end: a line or word end, never before
    ``limit``."""
    n = len(text)
    return n - _cut_start(
        text[::-1], n - at, limit=n - limit, starts_document=ends_document
    )


def _excerpt(
    raw: str,
    raw_start: int,
    *,
    anchor_start: int | None,
    anchor_end: int | None,
    length: int,
    least: int = 2 * WINDOW_CHARS,
) -> tuple[int, str]:
    """The window around the deciding evidence, cut at line or word
    boundaries, and where it starts in the document. ``raw`` is the document
    from ``raw_start``, WINDOW_SLACK characters wider than the window on each
    side (as labeling_items reads it); the evidence itself is never cut.
    ``least``: how far the window reaches at least, for evidence near the
    start."""
    start = max((anchor_start or 0) - WINDOW_CHARS, 0)
    end = min(max((anchor_end or 0) + WINDOW_CHARS, least), length)
    if not raw_start <= start <= end <= raw_start + len(raw):
        # Evidence beyond the text (the check clears it when either changes).
        return start, raw[start - raw_start : end - raw_start]
    keep_from = min(max(anchor_start or start, start), end)
    keep_to = min(max(anchor_end or start, keep_from), end)
    i = _cut_start(
        raw,
        start - raw_start,
        limit=keep_from - raw_start,
        starts_document=raw_start == 0,
    )
    j = _cut_end(
        raw,
        end - raw_start,
        limit=keep_to - raw_start,
        ends_document=raw_start + len(raw) >= length,
    )
    return raw_start + i, raw[i:j]


def _page_window(p: dict[str, Any], table) -> tuple[int, str, list[int]] | None:
    """For a document with pages (a PDF's), the window around the deciding
    evidence kept to the page(s) the evidence is on, and those pages: the
    page's text around it, never a window running into the next page. None
    without evidence in the document, or for evidence between two pages."""
    if p["anchor_start"] is None or p["anchor_end"] is None:
        return None
    bounds = pdfs.page_bounds(table, p["anchor_start"], p["anchor_end"])
    if bounds is None:
        return None
    pages, low, high = bounds
    # The excerpt of the page(s) alone, as if they were the whole document:
    # its cuts then land on their bounds, or inside them on a line or word.
    raw_start, raw = p["raw_start"], p["raw_text"]
    from_ = max(low, raw_start)
    to = max(min(high, raw_start + len(raw)), from_)
    start, text = _excerpt(
        raw[from_ - raw_start : to - raw_start],
        from_ - low,
        anchor_start=p["anchor_start"] - low,
        anchor_end=p["anchor_end"] - low,
        length=high - low,
        least=0,
    )
    return low + start, text, pages


def _why(p: dict[str, Any], *, gold: bool, reasons: dict[str, str]) -> dict[str, str]:
    """Why the claim is in front of the expert, in words: shown whether or
    not the project shows machine scores, so it never names a score. A
    flagged claim's reason is in its checker's own words (``reasons``)."""
    if gold:
        # The gold set measures the scorer: its items are drawn at random and
        # say nothing of what the machine thought, so as not to anchor the
        # labels it is measured against.
        return {
            "code": "gold",
            "text": "Gold check: drawn at random for the test set "
            "that measures the scorer",
        }
    verdict, reason = p["verdict"], p["reason"]
    if verdict == Verdict.UNCHECKED:
        return {"code": "unchecked", "text": "Not checked yet"}
    if verdict == Verdict.UNSCORED and reason:
        # A check that could not be made (a citation the case law cannot
        # confirm): no scorer would change that.
        said = verdict_text(verdict, reason)
        return {"code": reason, "text": f"{said}: its check could not be made"}
    if verdict == Verdict.UNSCORED:
        return {"code": "unscored", "text": "No scorer has judged this yet"}
    if verdict == Verdict.UNSAFE:
        said = reasons.get(reason, "its evidence may not support it")
        return {
            "code": reason or "flagged",
            "text": f"Flagged: {said[:1].lower()}{said[1:]}",
        }
    # The stored distance to the threshold, kept current by every hand-out
    # (labeling.queue_keys_refresh): an item opened outside the queue may
    # read one a threshold change behind.
    if p["uncertainty"] is not None and p["uncertainty"] < CLOSE_CALL:
        return {
            "code": "close_call",
            "text": "A close call: its evidence may not support it",
        }
    return {"code": "spot_check", "text": "Spot check of an item judged safe"}


def labeling_items(
    *, project: Project, annotator, ids: list[int]
) -> list[dict[str, Any]]:
    """What the labeling page needs to judge each claim, in ``ids`` order.

    Documents come as a window around the deciding evidence (cut in SQL, so a
    long document is not shipped 20 times, then moved to line or word
    boundaries); the page fetches the whole text only when the expert expands
    it. Machine scores are left out unless the project shows them; why the
    item is there (``why``) is said in words to every expert. A batch costs
    the same few queries whatever its size, and rows come as dicts of the
    columns used: building model instances and decoding unused JSON was most
    of the time of a hand-out.
    """

    if not ids:
        return []
    machine = project.show_machine_scores
    checker = checker_class(project.kind)
    reasons = checker.reasons
    display = records.claim_display(project)
    by_id = {
        p["pk"]: p
        for p in _rows(
            _ITEMS_SQL,
            # An id past bigint's range names no claim (and would be a
            # database error).
            [project.pk, [pk for pk in ids if 0 < pk < 2**63]],
            json_columns=frozenset({"data", "evidence", "details", "document_pages"}),
        )
    }
    document_ids = sorted({p["document_id"] for p in by_id.values()})
    scores: dict[int, list[dict[str, Any]]] = {}
    if machine:
        for s in ClaimScore.objects.filter(claim_id__in=by_id).values(
            "claim_id", "scorer", "scorer_version", "score", "reasoning"
        ):
            scores.setdefault(s["claim_id"], []).append(
                {
                    "scorer": s["scorer"],
                    "version": s["scorer_version"],
                    "score": s["score"],
                    # Why the LLM grader decided so: the expert weighs it.
                    "reasoning": s["reasoning"],
                }
            )
    siblings: dict[int, list[dict[str, Any]]] = {}
    for sibling in _rows(
        _SIBLINGS_SQL,
        {"documents": document_ids},
        json_columns=frozenset({"unrendered"}),
    ):
        siblings.setdefault(sibling["document_id"], []).append(sibling)
    my_labels = {
        a["claim_id"]: a
        for a in _rows(
            _MY_LABELS_SQL,
            # None (no expert: the item as anyone sees it) matches no label.
            [getattr(annotator, "pk", None), document_ids],
            json_columns=frozenset({"correction"}),
        )
    }

    hypothesis = records.claim_statement(project, display)
    hidden = checker.score_fields

    def label_of(claim_id: int) -> dict[str, Any] | None:
        a = my_labels.get(claim_id)
        if a is None:
            return None
        return {
            "label": a["label"],
            "client_id": str(a["client_id"]) if a["client_id"] else None,
            "note": a["note"],
            "correction": a["correction"],
            "suggestion": a["suggestion"],
        }

    items = []
    for pk in ids:
        p = by_id.get(pk)
        if p is None:
            continue
        claim = checker.claim_data.claim("", "", p["data"])
        shown = display(claim)
        table = pdfs.page_table({"pages": p["document_pages"]}, p["document_length"])
        paged = _page_window(p, table) if table else None
        if paged is not None:
            window_start, window_text, window_pages = paged
        else:
            window_start, window_text = _excerpt(
                p["raw_text"],
                p["raw_start"],
                anchor_start=p["anchor_start"],
                anchor_end=p["anchor_end"],
                length=p["document_length"],
            )
            window_pages = (
                pdfs.pages_of(table, window_start, window_start + len(window_text))
                if table
                else []
            )
        # False: the LLM's context matches no passage of the document, and
        # its aligned span means nothing; None: not checked yet.
        context_found = p["reason"] != Reason.NOT_IN_DOCUMENT if p["verdict"] else None
        item = {
            "id": pk,
            "external_id": p["external_id"],
            "model": p["model"],
            "data": p["data"],
            "type": claim.type,
            "type_display": shown["type_display"],
            "guideline_keys": guidelines.section_keys(
                claim.type, shown["type_display"]
            ),
            "value": claim.value,
            "value_display": shown["value_display"],
            "hypothesis": p["hypothesis"] or shown["hypothesis"],
            "context": claim.context,
            "premise": p["premise"],
            # Each span in the document with its page; none for a context not
            # found, whose aligned span is only the least bad match.
            "evidence": pdfs.evidence_paged(
                p["evidence"],
                document=p["document_external_id"],
                table=table if context_found is not False else None,
            ),
            "evidence_score": p["evidence_score"],
            "details": p["details"] if machine else without_keys(p["details"], hidden),
            "document": {
                "id": p["document_id"],
                "external_id": p["document_external_id"],
                "length": p["document_length"],
                "window_start": window_start,
                "window_text": window_text,
                # A PDF's: the pages the window shows, and how many it has.
                "pages": window_pages,
                "page_label": pdfs.page_label(window_pages),
                "page_count": len(table) if table else None,
            },
            "siblings": [
                {
                    "id": s["pk"],
                    "hypothesis": hypothesis(s["hypothesis"], s["unrendered"]),
                    "my_label": my_labels.get(s["pk"], {}).get("label"),
                }
                for s in siblings.get(p["document_id"], [])[:MAX_SIBLINGS]
            ],
            "overlap": is_overlap(project, pk),
            "my_label": label_of(pk),
            "why": _why(
                p,
                gold=gold_set.is_gold_document(project, p["document_id"]),
                reasons=reasons,
            ),
            "context_found": context_found,
        }
        if machine:
            item["machine"] = {
                "score": p["score"],
                "scored_by": p["scored_by"],
                "verdict": p["verdict"],
                "reason": p["reason"],
                "verdict_text": verdict_text(p["verdict"], p["reason"]),
                "scores": scores.get(pk, []),
            }
        items.append(item)
    return items
