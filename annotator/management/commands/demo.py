"""The quick-start demo: the whole product on the embedded Postgres and Redis.

Loads the demo corpus, trains a first scorer on 500 of its expert labels
(cached under var/), checks every prediction through a real Celery worker,
creates an admin and an annotator and serves the app on 127.0.0.1.
"""

from __future__ import annotations

import json
import secrets
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand

from annotator import embedded, services, tasks
from annotator.models import Prediction, Project, ScorerModel

PROJECT_NAME = "Refugee decisions (demo)"
EXPERT_LABELS = 500


class Command(BaseCommand):
    help = __doc__.splitlines()[0]

    def add_arguments(self, parser):
        parser.add_argument("--docs", type=int, default=300, help="demo documents")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--no-serve", action="store_true", help="set everything up, then exit"
        )
        parser.add_argument(
            "--retrain", action="store_true", help="ignore the cached first scorer"
        )

    def handle(self, *args, docs, port, no_serve, retrain, **options):
        from pipeline.demo_corpus import generate_corpus
        from pipeline.jsonl import document_to_json, label_to_json, prediction_to_json

        started = time.monotonic()
        self.step("database: migrating")
        call_command("migrate", verbosity=0)
        corpus = generate_corpus(docs=docs, seed=0)
        project, _ = Project.objects.get_or_create(
            name=PROJECT_NAME,
            defaults={
                "description": "Synthetic refugee-decision documents with LLM-style "
                "predictions (paper: ASYLEX setting).",
                "entity_schema": corpus.schema,
            },
        )
        expert = self.expert_labels(corpus)
        self.step(f"importing {len(corpus.documents)} documents")
        services.documents_import(
            project=project,
            files=[
                ("demo.jsonl", jsonl(document_to_json(d) for d in corpus.documents))
            ],
        )
        self.step(f"importing {len(corpus.predictions)} predictions")
        services.predictions_import(
            project=project,
            stream=jsonl(prediction_to_json(p) for p in corpus.predictions),
        )
        self.step(f"importing {len(expert)} expert labels")
        services.labels_import(
            project=project, stream=jsonl(label_to_json(lab) for lab in expert.values())
        )
        scorer, trained = self.first_scorer(project, corpus, expert, retrain=retrain)
        if trained or not scorer.is_active:
            # Resets verdicts and queues the check: the worker scores with it.
            services.scorer_activate(scorer=scorer)
        admin_password, annotator_password = self.accounts(project)

        log = settings.VAR_DIR / "log" / "demo-worker.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        self.step("starting a Celery worker (log: var/log/demo-worker.log)")
        worker = embedded.worker_start(log_path=log)
        try:
            embedded.worker_wait_ready(worker, log, timeout=120)
            if Prediction.objects.filter(project=project, verdict="").exists():
                # Checks queued by an earlier, interrupted demo may sit unacked
                # with a dead worker; the task is idempotent, so ask again.
                tasks.check_predictions.delay(project.pk)
            self.wait_for_checks(project)
            self.summary(project, scorer, admin_password, annotator_password, port)
            self.stdout.write(f"set up in {time.monotonic() - started:.0f} s")
            if not no_serve:
                call_command(
                    "runserver",
                    f"127.0.0.1:{port}",
                    use_reloader=False,
                    skip_checks=True,
                )
        finally:
            embedded.worker_stop(worker)

    def step(self, message: str) -> None:
        self.stdout.write(self.style.MIGRATE_HEADING(f"==> {message}"))

    def expert_labels(self, corpus) -> dict:
        """The gold labels of whole documents, up to 500: the experts' work."""
        gold = {lab.prediction_id: lab for lab in corpus.labels}
        chosen = {}
        for p in corpus.predictions:
            if len(chosen) >= EXPERT_LABELS:
                break
            chosen[p.id] = gold[p.id]
        return chosen

    def first_scorer(self, project, corpus, expert, *, retrain: bool):
        """Train (or reuse the cached) first scorer and register it.

        Returns the scorer row and whether it was trained just now.
        """
        from pipeline.score import read_metadata
        from pipeline.train import ProgressBars, train_scorer

        out = settings.VAR_DIR / "scorers" / f"demo-{len(corpus.documents)}-v1"
        metadata = {} if retrain else read_metadata(out)
        trained = not metadata
        if metadata:
            self.step(f"first scorer: cached in {out}")
        else:
            self.step(
                "first scorer: training on silver pairs, then "
                f"{len(expert)} expert labels (a few minutes on CPU, once)"
            )
            documents = {d.id: d for d in corpus.documents}
            bars = ProgressBars()
            metadata = train_scorer(
                documents,
                corpus.predictions,
                expert,
                out,
                on_progress=bars,
            )
            bars.close()
        scorer, _ = ScorerModel.objects.update_or_create(
            project=project,
            version="v1",
            defaults={
                "base_model": metadata["base_model"],
                "path": str(out),
                "label_counts": metadata["label_counts"],
                "threshold": metadata["threshold"],
                "metrics": metadata["validation"],
            },
        )
        return scorer, trained

    def accounts(self, project) -> tuple[str, str]:
        """An admin and an annotator with fresh passwords for this session."""
        users = get_user_model()
        admin_password, annotator_password = (secrets.token_urlsafe(9) for _ in "ab")
        admin, _ = users.objects.get_or_create(username="admin")
        admin.is_staff = admin.is_superuser = True
        admin.set_password(admin_password)
        admin.save()
        annotator, _ = users.objects.get_or_create(username="annotator")
        annotator.set_password(annotator_password)
        annotator.save()
        project.members.add(annotator)
        return admin_password, annotator_password

    def wait_for_checks(self, project) -> None:
        """Progress of the worker aligning and scoring every prediction."""
        from tqdm import tqdm

        pending = Prediction.objects.filter(project=project, verdict="")
        total = Prediction.objects.filter(project=project).count()
        with tqdm(total=total, desc="worker: align + score", unit="pred") as bar:
            while True:
                left = pending.count()
                bar.n = total - left
                bar.refresh()
                if not left:
                    return
                time.sleep(1)

    def summary(self, project, scorer, admin_password, annotator_password, port):
        predictions = Prediction.objects.filter(project=project)
        unsafe = predictions.filter(verdict="unsafe").count()
        base = f"http://127.0.0.1:{port}"
        self.stdout.write(
            self.style.SUCCESS(
                f"\n{predictions.count()} predictions checked, {unsafe} judged unsafe "
                f"(scorer {scorer.version}, validation F1 "
                f"{scorer.metrics.get('f1', 0):.3f}, threshold {scorer.threshold:.3f})"
            )
        )
        self.stdout.write(
            f"  predictions  {base}/projects/{project.pk}/predictions/\n"
            f"  API docs     {base}/api/docs/\n"
            f"  admin        {base}/admin/\n"
            f"  login as     admin / {admin_password}   (admin)\n"
            f"               annotator / {annotator_password}   (annotator)\n"
        )


def jsonl(rows):
    """A binary JSONL stream, the import services' input."""
    return services.stream_of("".join(json.dumps(r) + "\n" for r in rows))
