from annotator import checking, extraction

from ._base import ProjectCommand


class Command(ProjectCommand):
    help = (
        "Run the pipeline on a project: extraction with --model (LLM), then "
        "alignment, scoring and verdicts for every unchecked prediction."
    )

    def add_arguments(self, parser):
        self.add_project_argument(parser)
        parser.add_argument("--model", help="Extract first with this LLM model.")
        parser.add_argument(
            "--force", action="store_true", help="Recheck every prediction."
        )
        parser.add_argument(
            "--queue",
            action="store_true",
            help="Hand the work to the Celery workers instead of running it here.",
        )

    def handle(self, *args, project, model, force, queue, **options):
        target = self.get_project(project)
        if model:
            run = extraction.extraction_run_start(project=target, model=model)
            self.stdout.write(
                f"extraction run {run.pk}: {run.progress_total} documents"
            )
            if not queue:
                run = extraction.extraction_run_execute(run_id=run.pk)
                self.stdout.write(
                    f"extraction run {run.pk}: {run.status}, {run.progress_done} "
                    f"documents, {run.prompt_tokens + run.completion_tokens} tokens"
                    + (f", error: {run.error}" if run.error else "")
                )
        if queue:
            waiting = checking.predictions_check_queue(project=target, force=force)
            self.stdout.write(f"queued: the workers will check {waiting} predictions")
            return
        summary = checking.predictions_check(
            project_id=target.pk, force=force, progress=self.progress("checked")
        )
        self.stderr.write("")
        for error in summary.errors:
            self.stderr.write(self.style.WARNING(error))
        self.stdout.write(
            f"checked {summary.checked}: {summary.safe} safe, {summary.unsafe} unsafe, "
            f"{summary.unscored} unscored "
            f"(scorer: {summary.scorer or 'none yet: nothing is judged safe'})"
        )
