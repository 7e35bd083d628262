"""A test run stops the embedded servers it started: the Redis broker and
Postgres it brought up in its VAR_DIR are gone when pytest exits, even where
another process (a worker still stopping) is a client of Redis then."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import ROOT


def _alive(pid_file: Path) -> bool:
    try:
        pid = int(pid_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return False
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.slow
def test_a_test_run_stops_the_servers_it_started(tmp_path):
    var = tmp_path / "var"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL")
    }
    env["VAR_DIR"] = str(var)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/linger_case.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "1 passed" in run.stdout
    time.sleep(6)  # the lingering client has gone too
    # The run started both in its own VAR_DIR...
    assert (var / "redis" / "redis.db").exists() and (var / "pg").is_dir()
    # ...and neither is left running.
    registry = var / "redis" / "redis.db.settings"
    if registry.exists():
        assert not _alive(Path(json.loads(registry.read_text())["pidfile"]))
    assert not _alive(var / "pg" / "postmaster.pid")
