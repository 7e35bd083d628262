"""The online check: one RAG item checked while the caller waits, bounded in
size and time by the PROVENANCE_CHECK_* settings; nothing is stored."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from django.conf import settings

from annotator.claims.checking import project_checker, project_scorer
from annotator.core.errors import ItemInvalid, TransientError
from annotator.models import Project
from pipeline.checkers.provenance import (
    CheckLimits,
    DeadlineExceeded,
    LimitExceeded,
    item_claim,
    item_document,
    item_from_json,
)
from pipeline.checkers.provenance.commands import result_to_json

#: The setting behind each field of the pipeline's CheckLimits.
_CHECK_LIMIT_SETTINGS = {
    "query_chars": "PROVENANCE_CHECK_MAX_QUERY_CHARS",
    "claims": "PROVENANCE_CHECK_MAX_CLAIMS",
    "sentences": "PROVENANCE_CHECK_MAX_SENTENCES",
}


def rag_item_check(*, project: Project, raw: Any) -> dict[str, Any]:
    """One RAG item (``{"id", "query", "answer", "contexts"}``) checked as the
    check run would check it in ``project``, a provenance project (its
    checker, its scorer), for a caller waiting on the answer: the checked
    item's output line, as ``python -m pipeline provenance`` writes it.
    Nothing is stored.

    The work is bounded by the PROVENANCE_CHECK_* settings: an item over a
    limit is refused before any model runs, and a check past
    PROVENANCE_CHECK_SECONDS stops.

    Raises:
        ItemInvalid: the item does not parse, naming the field, or is over a
            limit, naming the setting.
        TransientError: the check ran out of time.
        ConfigurationError: as ``project_checker``.
    """
    try:
        item = item_from_json(raw)
    except ValueError as e:
        raise ItemInvalid(str(e)) from e
    scorer, _ = project_scorer(project)
    checker = project_checker(project, {item.id: item_document(item)})
    # Models load once per process, whatever is sent: the budget is the
    # item's own work, so the clock starts once they are in memory.
    checker.relevance  # noqa: B018
    deadline = time.monotonic() + settings.PROVENANCE_CHECK_SECONDS
    try:
        checked, errors = checker.results(
            [item_claim(item)],
            scorer=scorer,
            limits=CheckLimits(
                query_chars=settings.PROVENANCE_CHECK_MAX_QUERY_CHARS,
                claims=settings.PROVENANCE_CHECK_MAX_CLAIMS,
                sentences=settings.PROVENANCE_CHECK_MAX_SENTENCES,
            ),
            deadline=deadline,
        )
    except LimitExceeded as e:
        setting = _CHECK_LIMIT_SETTINGS[e.limit]
        raise ItemInvalid(f"{e} ({setting})") from e
    except DeadlineExceeded as e:
        raise TransientError(
            f"the check took longer than PROVENANCE_CHECK_SECONDS "
            f"({settings.PROVENANCE_CHECK_SECONDS:g} s) and was stopped: send "
            "fewer or shorter sentences, or import the item into the project "
            "for the check run"
        ) from e
    if errors:
        raise ItemInvalid(str(errors[0])) from errors[0]
    [(_, result)] = checked
    # The item as sent: the checker rebuilds it from its document, without
    # the caller's own fields (a trace id), which the answer echoes.
    return result_to_json(replace(result, item=item))
