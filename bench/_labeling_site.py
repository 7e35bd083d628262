"""A throwaway SafePassage site for the labeling benchmarks.

Creates a fresh database on the configured Postgres (the embedded one when
DATABASE_URL is unset), migrates it, seeds one project with experts,
documents and checked claims, serves it with gunicorn on 127.0.0.1 and
drops the database afterwards.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PASSWORD = "bench-pass-123"
SENTENCES = [
    "The hearing took place in Toronto on 17 January 2012.",
    "The panel was chaired by member Jane Smith.",
    "The claimant is a citizen of Colombia and fears the FARC.",
    "Counsel for the Minister did not appear.",
    "The claim is rejected for lack of credible evidence.",
]


@dataclass
class Site:
    url: str
    project_id: int
    usernames: list[str]
    #: Labels a claim asks for, by its id (the project's overlap rule).
    labels_needed: Callable[[int], int]
    password: str = PASSWORD


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _base_url() -> str:
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    from annotator.core import embedded

    var_dir = Path(os.environ.get("VAR_DIR", ROOT / "var"))
    embedded.postgres_start(var_dir)
    return embedded.postgres_url(var_dir)


def _cache_url() -> str:
    """Login throttling needs a shared cache: the one named, else the
    embedded Redis (the broker here is in memory)."""
    url = os.environ.get("CACHE_URL")
    if url:
        return url
    from annotator.core import embedded

    var_dir = Path(os.environ.get("VAR_DIR", ROOT / "var"))
    embedded.redis_start(var_dir)
    return f"unix://{embedded.redis_socket(var_dir)}?db=1"


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def _seed(*, annotators: int, documents: int, per_document: int) -> tuple[int, list]:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.utils import timezone

    from annotator.labeling import labels
    from annotator.models import Claim, Document, Project

    rng = random.Random(7)
    User = get_user_model()
    hashed = make_password(PASSWORD)
    users = User.objects.bulk_create(
        User(username=f"expert{i:02d}", password=hashed) for i in range(annotators)
    )
    project = Project.objects.create(name="bench", overlap_share=0.1)
    project.members.set(users)
    docs = Document.objects.bulk_create(
        Document(
            project=project,
            external_id=f"decision-{d}",
            text=" ".join(rng.choice(SENTENCES) for _ in range(40)),
        )
        for d in range(documents)
    )
    # Checked, as the check leaves them: experts are handed only those.
    checked_at = timezone.now()
    claims = []
    for doc in docs:
        for i in range(per_document):
            start = doc.text.find("Toronto")
            span = doc.text[max(start - 26, 0) : start + 7]
            claims.append(
                Claim(
                    project=project,
                    document=doc,
                    external_id=f"{doc.external_id}:{i}",
                    data={
                        "type": "GPE",
                        "value": "Toronto" if i % 3 else "Toronto, Ontario",
                        "context": "The hearing took place in Toronto, Ontario",
                    },
                    hypothesis="GPE: Toronto",
                    premise=span,
                    evidence=[
                        dict(
                            source=doc.external_id,
                            start=max(start - 26, 0),
                            end=start + 7,
                            text=span,
                            role="aligned",
                            score=0.85,
                        )
                    ],
                    evidence_score=0.85,
                    score=rng.random(),
                    verdict="safe",
                    checked_at=checked_at,
                )
            )
    Claim.objects.bulk_create(claims, batch_size=2000)
    # As the check would have left them: queue order keys set.
    labels.queue_keys_refresh(project=project)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # a live database has statistics
    return project.pk, [u.username for u in users]


def _labels_needed(project_id: int) -> Callable[[int], int]:
    from annotator.labeling.queue import is_overlap
    from annotator.models import Project

    project = Project.objects.get(pk=project_id)
    return lambda claim: project.overlap_labels if is_overlap(project, claim) else 1


def worker_options(threads: int) -> list[str]:
    """gunicorn's worker: the plain sync one for one request at a time, as
    docker-compose serves (a new connection per request), else threads with
    keep-alive."""
    if threads == 1:
        return ["--worker-class", "sync"]
    return [
        "--worker-class",
        "gthread",
        "--threads",
        str(threads),
        "--keep-alive",
        "30",
    ]


@contextmanager
def labeling_site(
    *,
    annotators: int,
    documents: int,
    per_document: int,
    workers: int = 2,
    threads: int = 4,
):
    import psycopg

    base = _base_url()
    name = f"bench_labeling_{os.getpid()}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    env = {
        **os.environ,
        "DATABASE_URL": _with_database(base, name),
        "DJANGO_SETTINGS_MODULE": "annotator.core.settings",
        "SECRET_KEY": os.environ.get("SECRET_KEY", "bench-only-secret-" + "x" * 40),
        "DEBUG": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SESSION_COOKIE_SECURE": "false",
        "CSRF_COOKIE_SECURE": "false",
        "WHITENOISE_USE_FINDERS": "true",
        "CELERY_BROKER_URL": "memory://",
        "CACHE_URL": _cache_url(),
        "LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)
    server = None
    try:
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        project_id, usernames = _seed(
            annotators=annotators, documents=documents, per_document=per_document
        )
        from django.db import connections

        connections.close_all()
        port = _free_port()
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "annotator.core.wsgi",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(workers),
                *worker_options(threads),
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=env,
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url + "/login/", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("gunicorn did not start") from None
                time.sleep(0.2)
        yield Site(
            url=url,
            project_id=project_id,
            usernames=usernames,
            labels_needed=_labels_needed(project_id),
        )
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=20)
        try:
            from django.db import connections

            connections.close_all()
        except Exception as e:  # noqa: BLE001 - cleanup must go on
            print(f"closing connections: {e}", file=sys.stderr)
        with psycopg.connect(base, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
