"""Postgres advisory locks held by whoever executes a run or a delivery."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from django.db import connection


@contextlib.contextmanager
def advisory_lock(lock_class: int, row_id: int) -> Iterator[bool]:
    """A session advisory lock on one row, held by whoever executes it (a run,
    a webhook delivery): it ends with the connection, so work whose worker
    died can be picked up again.

    ``lock_class`` (the key's high bits) is the table's own, as ids of
    different tables overlap.
    """
    key = (lock_class << 40) + row_id
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s::bigint)", [key])
        held = cursor.fetchone()[0]
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s::bigint)", [key])
