"""Sending Celery tasks from code that has just written rows.

The rows are the record of the work (an unchecked claim, a pending run);
the message only wakes a worker. So a broker outage must not turn writes that
are committed into an error: the send is logged and dropped, and the beat
sweeps (``tasks.sweep_unchecked``, ``tasks.sweep_llm_runs``,
``tasks.retrain_due``) find the work and send it again.
"""

from __future__ import annotations

import logging

from django.db import transaction
from kombu.exceptions import OperationalError

from annotator.core.celery import app

logger = logging.getLogger(__name__)


def send_after_commit(task: str, *args, **kwargs) -> None:
    """Send the task named ``task`` with ``args`` and ``kwargs`` once the
    current transaction commits (at once outside one); a broker that cannot be
    reached is logged, not raised.

    By name, so that services never import the tasks that call them: the
    tasks module is the edge, and its routes (``annotator.core.celery``) go by
    name too."""

    def send() -> None:
        try:
            app.send_task(task, args, kwargs)
        except OperationalError as e:
            logger.warning(
                "broker unreachable, %s%r left for the sweep: %s", task, args, e
            )

    transaction.on_commit(send)
