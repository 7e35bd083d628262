from annotator.claims import checking
from annotator.claims.ingest import Outcome
from annotator.core.errors import ApplicationError
from annotator.kinds.extraction import extraction_runs
from annotator.management.commands._base import ProjectCommand, failure
from annotator.models import RunStatus


class Command(ProjectCommand):
    help = (
        "Run the pipeline on a project: extraction with --model (LLM), then "
        "alignment, scoring and verdicts for every unchecked claim."
    )

    def add_arguments(self, parser):
        self.add_project_argument(parser)
        parser.add_argument("--model", help="Extract first with this LLM model.")
        parser.add_argument("--force", action="store_true", help="Recheck every claim.")
        parser.add_argument(
            "--queue",
            action="store_true",
            help="Hand the work to the Celery workers instead of running it here.",
        )

    def handle(self, *args, project, model, force, queue, **options):
        target = self.get_project(project)
        try:
            extracted, failed = (
                self.extract(target, model=model, queue=queue) if model else (0, 0)
            )
            if queue:
                waiting = checking.claims_check_queue(project=target, force=force)
                self.stdout.write(f"queued: the workers will check {waiting} claims")
                return
            summary = checking.claims_check(
                project_id=target.pk, force=force, progress=self.progress("checked")
            )
        except ApplicationError as e:
            raise failure(str(e)) from e
        self.stderr.write("")
        for error in summary.errors:
            self.stderr.write(self.style.WARNING(error))
        self.stdout.write(
            f"checked {summary.checked}: {summary.safe} safe, {summary.unsafe} unsafe, "
            f"{summary.unscored} unscored "
            f"(scorer: {summary.scorer or 'none yet: nothing is judged safe'})"
        )
        outcome = Outcome.of(
            used=extracted + summary.checked, skipped=failed + len(summary.errors)
        )
        self.finish(outcome, what="claims", done="checked")

    def extract(self, target, *, model: str, queue: bool) -> tuple[int, int]:
        """Extracts here (or queues the run); returns how many documents were
        extracted and how many failed, each named on stderr. Stops the command
        when every document failed."""
        run = extraction_runs.extraction_run_start(project=target, model=model)
        self.stdout.write(f"extraction run {run.pk}: {run.progress_total} documents")
        if queue:
            return 0, 0
        run = extraction_runs.extraction_run_execute(run_id=run.pk)
        self.stdout.write(
            f"extraction run {run.pk}: {run.status}, {run.progress_done} "
            f"documents, {run.prompt_tokens + run.completion_tokens} tokens"
            + (f", error: {run.error}" if run.error else "")
        )
        failed = run.items.filter(status=RunStatus.FAILED).select_related("document")
        for item in failed:
            self.stderr.write(
                self.style.WARNING(
                    f"document {item.document.external_id}: {item.error}"
                )
            )
        if run.status == RunStatus.FAILED:
            raise failure(f"extraction run {run.pk} failed: {run.error}")
        return run.items.filter(status=RunStatus.SUCCEEDED).count(), len(failed)
