"""The quick-start demo: the whole product on the embedded Postgres and Redis.

Loads the demo corpus, measures the untuned base on the gold set, starts a
Celery worker per queue class (checks, LLM calls, training), checks every
claim, creates an admin and an annotator and serves the app on 127.0.0.1
while the training worker trains the scorer in two runs, so that the
dashboard's learning curve shows what expert labels add: a first scorer on
silver pairs alone (0 labels), then, once the corpus's 500 expert labels
outside the gold test set have arrived, that scorer fine-tuned on them. Both
are measured on the gold set, trained once (later demos reuse them), and
their verdicts replace the unscored ones as they land.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import signal
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import connection
from django.utils import timezone

from annotator.claims import checking, ingest
from annotator.core import embedded
from annotator.labeling import gold
from annotator.labeling.queue import is_overlap
from annotator.models import (
    ACTIVE_RUN_STATUSES,
    Claim,
    Document,
    Label,
    Project,
    ScorerModel,
    TrainingRun,
)
from annotator.training import registry
from annotator.training import runs as training_runs
from annotator.training.data import labelled_data
from pipeline.jsonl import claim_to_json, document_to_json, label_to_json
from pipeline.score import DEFAULT_BASE_MODEL

PROJECT_NAME = "Refugee decisions (demo)"
EXPERT_LABELS = 500
#: The demo's two runs: silver pairs alone (no expert label read, whatever
#: the database holds), then that scorer fine-tuned on the expert labels.
SILVER, HUMAN = {"stages": ["silver"]}, {"stages": ["human"]}


class Command(BaseCommand):
    help = __doc__.splitlines()[0]

    def add_arguments(self, parser):
        parser.add_argument("--docs", type=int, default=300, help="demo documents")
        parser.add_argument(
            "--port",
            type=int,
            default=int(os.environ.get("PORT") or 8000),
            help="port to serve on (default $PORT or 8000)",
        )
        parser.add_argument(
            "--no-serve", action="store_true", help="set everything up, then exit"
        )
        parser.add_argument(
            "--retrain", action="store_true", help="train the demo's scorers again"
        )

    def handle(self, *args, docs, port, no_serve, retrain, **options):
        from tools.demo_corpus import generate_corpus

        started = time.monotonic()
        # `kill` and process managers stop with SIGTERM, which by default ends
        # Python without unwinding: the Celery worker and the embedded
        # Postgres would outlive the demo. Exit as Ctrl-C does instead.
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
        self.step("database: migrating")
        call_command("migrate", verbosity=0)
        corpus = generate_corpus(docs=docs, seed=0)
        project, _ = Project.objects.get_or_create(
            name=PROJECT_NAME,
            defaults={
                "description": "Synthetic refugee-decision documents with LLM-style "
                "claims (paper: ASYLEX setting).",
                "options": {"entity_schema": corpus.schema},
            },
        )
        self.step(f"importing {len(corpus.documents)} documents")
        ingest.documents_import(
            project=project,
            files=[
                ("demo.jsonl", jsonl(document_to_json(d) for d in corpus.documents))
            ],
        )
        self.step(f"importing {len(corpus.claims)} claims")
        ingest.claims_import(
            project=project,
            stream=jsonl(claim_to_json(p) for p in corpus.claims),
        )
        expert, gold_labels = self.expert_labels(project, corpus)
        self.step(
            f"importing the {len(gold_labels)} labels of the gold test set "
            "(they only measure scorers)"
        )
        labels_import(project, gold_labels.values())
        self.base_measured(project)
        admin_password, annotator_password = self.accounts(project)

        logs = settings.VAR_DIR / "log"
        logs.mkdir(parents=True, exist_ok=True)
        self.step(
            "starting a Celery worker per queue class: "
            + ", ".join(embedded.WORKER_CLASSES)
            + " (logs: var/log/demo-<class>.log)"
        )
        # Beat's sweeps recover what an interrupted earlier demo left, and the
        # worker sends the check sweep once as it starts.
        workers = embedded.workers_start(
            log_dir=logs,
            prefix="demo",
            beat_schedule=settings.VAR_DIR / "celerybeat-schedule",
        )
        try:
            embedded.workers_wait_ready(workers, timeout=120)
            training = self.silver_scorer(project, retrain=retrain)
            self.wait_for_checks(project)
            self.summary(project, training, admin_password, annotator_password, port)
            self.stdout.write(f"set up in {time.monotonic() - started:.0f} s")
            experts = (project, corpus, expert, training, retrain)
            if no_serve:
                # Stopping the workers would stop the runs: wait for them.
                self.experts_label(*experts, wait=True)
            else:
                threading.Thread(
                    target=self.experts_label, args=experts, daemon=True
                ).start()
                call_command(
                    "runserver",
                    f"127.0.0.1:{port}",
                    use_reloader=False,
                    skip_checks=True,
                )
        finally:
            # A second Ctrl-C or SIGTERM must not cut the clean-up short,
            # leaving workers and the embedded servers running.
            for stop in (signal.SIGINT, signal.SIGTERM):
                signal.signal(stop, signal.SIG_IGN)
            for worker in workers.values():
                embedded.worker_stop(worker.process)
            if settings.EMBEDDED_REDIS:
                embedded.redis_stop(settings.VAR_DIR)

    def step(self, message: str) -> None:
        self.stdout.write(self.style.MIGRATE_HEADING(f"==> {message}"))

    def expert_labels(self, project, corpus) -> tuple[dict, dict]:
        """The experts' work: labels of whole documents outside the gold test
        set, up to 500, for training; and every gold-set claim's label,
        which only measures scorer versions."""

        gold_documents = set(
            gold.restrict(
                Document.objects.filter(project=project),
                project,
                gold=True,
                document_field="id",
            ).values_list("external_id", flat=True)
        )
        truth = {lab.claim_id: lab for lab in corpus.labels}
        chosen: dict = {}
        gold_labels: dict = {}
        for p in corpus.claims:
            if p.document_id in gold_documents:
                gold_labels[p.id] = truth[p.id]
            elif len(chosen) < EXPERT_LABELS:
                chosen[p.id] = truth[p.id]
        return chosen, gold_labels

    def base_measured(self, project) -> None:
        """The untuned base model measured on the gold test set: the learning
        curve's first point, before any expert label (once)."""
        if ScorerModel.objects.filter(project=project, version="base").exists():
            return
        self.step("base model: measuring the untuned scorer on the gold set")
        data = labelled_data(project, gold_set=True, labelled_only=True)
        metrics = registry.gold_evaluate(
            project=project,
            data=data,
            model=DEFAULT_BASE_MODEL,
            threshold=project.nli_threshold,
        )
        ScorerModel.objects.create(
            project=project,
            version="base",
            base_model=DEFAULT_BASE_MODEL,
            path=DEFAULT_BASE_MODEL,
            threshold=project.nli_threshold,
            metrics={"gold": metrics},
            gold_f1=None if metrics is None else metrics["f1"],
            expert_labels=0,
        )

    def silver_scorer(self, project, *, retrain: bool) -> ScorerModel | TrainingRun:
        """The first scorer, on silver pairs alone (no expert label has
        arrived yet): trained by an earlier demo, or the run now training it
        on the training worker (the app's path: measured on the gold set,
        promoted, every claim checked again with it when it lands)."""

        done = self.demo_scorer(project, SILVER, retrain=retrain)
        if done is not None:
            self.step(f"first scorer: {done.version}, trained earlier ({done.path})")
            if not ScorerModel.objects.filter(project=project, is_active=True).exists():
                # Resets verdicts and queues the check: the worker scores with it.
                checking.scorer_activate(scorer=done)
            return done
        run = self.training_run(project, SILVER)
        self.step(
            f"first scorer: training run {run.pk} on the training worker, on "
            "silver pairs alone (the dashboard follows it, log: "
            "var/log/demo-training.log)"
        )
        return run

    def experts_label(self, project, corpus, expert, first, retrain, wait=False):
        """The experts' turn, once the first scorer exists: their labels
        arrive and a run fine-tunes that scorer on them alone, so the gap
        between the two versions on the learning curve is what the labels
        add. Runs beside the server (a thread) unless ``wait``."""
        try:
            if isinstance(first, TrainingRun):
                first = self.landed(first, wait=wait)
            if first is None:
                self.step("no first scorer (see its run's log): no second run")
                return
            labels_import(project, expert.values())
            self.simulated_overlap_labels(project, corpus)
            done = self.demo_scorer(project, HUMAN, retrain=retrain)
            if done is not None:
                self.step(f"scorer on expert labels: {done.version}, trained earlier")
                return
            run = self.training_run(project, {"base": first.pk, **HUMAN})
            self.step(
                f"{len(expert)} expert labels arrived: training run {run.pk} "
                f"fine-tunes {first.version} on them"
            )
            if wait:
                self.landed(run, wait=True)
        finally:
            if not wait:
                connection.close()  # this thread's own

    def demo_scorer(self, project, stages: dict, *, retrain: bool):
        """The newest version an earlier demo trained with ``stages``, whose
        folder is still there; None to train it (again)."""
        if retrain:
            return None
        done = (
            ScorerModel.objects.filter(
                project=project,
                training_run__trigger=TrainingRun.Trigger.DEMO,
                training_run__params__contains=stages,
            )
            .order_by("-created_at")
            .first()
        )
        return done if done is not None and Path(done.path).is_dir() else None

    def training_run(self, project, params: dict) -> TrainingRun:
        """The project's run under way (an earlier demo's, or one beat
        started), else a new demo run."""
        under_way = TrainingRun.objects.filter(
            project=project, status__in=ACTIVE_RUN_STATUSES
        ).first()
        return under_way or training_runs.training_run_start(
            project=project, trigger=TrainingRun.Trigger.DEMO, params=params
        )

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
        """Progress of the worker aligning and scoring every claim."""
        from tqdm import tqdm

        pending = Claim.objects.filter(project=project, checked_at=None)
        total = Claim.objects.filter(project=project).count()
        with tqdm(total=total, desc="worker: align + score", unit="pred") as bar:
            while True:
                left = pending.count()
                bar.n = total - left
                bar.refresh()
                if not left:
                    return
                time.sleep(1)

    def landed(self, run: TrainingRun, *, wait: bool) -> ScorerModel | None:
        """The version ``run`` registered, once it has ended (None if it
        registered none); with a progress bar where the demo waits on it."""
        from tqdm import tqdm

        with tqdm(
            total=100, desc=f"training run {run.pk}", unit="%", disable=not wait
        ) as bar:
            while True:
                run.refresh_from_db()
                bar.n = round(100 * run.progress)
                bar.set_postfix_str(run.stage or run.status)
                if run.status not in ACTIVE_RUN_STATUSES:
                    break
                time.sleep(2)
        if wait:
            self.stdout.write(run.log)
        return ScorerModel.objects.filter(training_run=run).first()

    def summary(self, project, scorer, admin_password, annotator_password, port):
        claims = Claim.objects.filter(project=project)
        unsafe = claims.filter(verdict="unsafe").count()
        base = f"http://127.0.0.1:{port}"
        base_f1 = (
            ScorerModel.objects.filter(project=project, version="base")
            .values_list("gold_f1", flat=True)
            .first()
        )
        untuned = "" if base_f1 is None else f"; untuned base gold-set F1 {base_f1:.3f}"
        if isinstance(scorer, TrainingRun):
            judged = (
                f"the first scorer is training on silver pairs (run {scorer.pk}"
                f"{untuned}); then the expert labels arrive and a second run "
                "trains on them: each one's verdicts replace these as it lands"
            )
        else:
            gold_f1 = "n/a" if scorer.gold_f1 is None else f"{scorer.gold_f1:.3f}"
            judged = (
                f"{unsafe} judged unsafe (scorer {scorer.version}, gold-set F1 "
                f"{gold_f1}{untuned}, threshold {scorer.threshold:.3f})"
            )
        self.stdout.write(
            self.style.SUCCESS(f"\n{claims.count()} claims checked, {judged}")
        )
        self.stdout.write(
            f"  dashboard    {base}/projects/{project.pk}/dashboard/\n"
            f"  claims       {base}/projects/{project.pk}/claims/\n"
            f"  API docs     {base}/api/docs/\n"
            f"  admin        {base}/admin/\n"
            f"  login as     admin / {admin_password}   (admin)\n"
            f"               annotator / {annotator_password}   (annotator)\n"
        )

    def simulated_overlap_labels(self, project, corpus, *, items: int = 120) -> None:
        """SIMULATED labels by two made-up experts on overlap claims, so
        the dashboard's agreement (Cohen's kappa) and labels-per-hour charts
        have something to show. Not real labeling work: expert 1 copies the
        corpus's gold label, expert 2 disagrees with it now and then; their
        timings are drawn around the paper's 250 labels an hour. Seeded, and
        replaced (not duplicated) when the demo runs again.
        """
        users = get_user_model()
        experts = []
        for name in ("demo-expert-1", "demo-expert-2"):
            user, created = users.objects.get_or_create(username=name)
            if created:
                user.set_unusable_password()
                user.save()
            project.members.add(user)
            experts.append(user)
        Label.objects.filter(claim__project=project, annotator__in=experts).delete()
        truth = {lab.claim_id: lab.label for lab in corpus.labels}
        overlap = [
            (pk, truth[external_id])
            for pk, external_id in Claim.objects.filter(project=project)
            .order_by("pk")
            .values_list("pk", "external_id")
            if is_overlap(project, pk) and external_id in truth
        ][:items]
        rng = random.Random(0)
        flip = {"safe": "unsafe", "unsafe": "safe"}
        # (expert, session start, median seconds per label, disagreement rate)
        sessions = [
            (experts[0], timezone.now() - timedelta(days=2, hours=3), 13.0, 0.0),
            (experts[1], timezone.now() - timedelta(days=1, hours=5), 17.0, 0.08),
        ]
        rows, stamps = [], []
        for expert, clock, median, disagree in sessions:
            for pk, label in overlap:
                seconds = round(min(rng.lognormvariate(0, 0.45) * median, 600), 3)
                if disagree and rng.random() < disagree:
                    label = flip[label]
                elif disagree and rng.random() < 0.03:
                    label = Label.Value.UNSURE
                clock += timedelta(seconds=seconds + rng.uniform(0.5, 3))
                rows.append(
                    Label(
                        claim_id=pk,
                        annotator=expert,
                        label=label,
                        seconds_spent=seconds,
                        extra={"simulated": True},
                    )
                )
                stamps.append(clock)
        created = Label.objects.bulk_create(rows)
        for row, stamp in zip(created, stamps, strict=True):
            row.created_at = row.updated_at = stamp
        # bulk_update writes the values as given (no auto_now), unlike save().
        Label.objects.bulk_update(created, ["created_at", "updated_at"])
        self.step(
            f"simulated a second expert's labels on {len(overlap)} overlap "
            "claims (for the dashboard's agreement and labels per hour)"
        )


def labels_import(project, labels) -> None:
    ingest.labels_import(
        project=project, stream=jsonl(label_to_json(lab) for lab in labels)
    )


def jsonl(rows):
    """A binary JSONL stream, the import services' input."""
    return ingest.stream_of("".join(json.dumps(r) + "\n" for r in rows))
