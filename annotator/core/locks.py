"""Postgres advisory locks held by whoever executes a run or a delivery."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from django.db import connection


@contextlib.contextmanager
def advisory_lock(lock_class: int, run_id: int) -> Iterator[bool]:
    """A session advisory lock, held by whoever executes the run: it ends with
    the connection, so a run whose worker died can be picked up again.

    ``lock_class`` (the key's high bits) is the kind of run's own, as run ids
    of different tables overlap.
    """
    key = (lock_class << 40) + run_id
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s::bigint)", [key])
        held = cursor.fetchone()[0]
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s::bigint)", [key])
