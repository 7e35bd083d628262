from pathlib import Path

from annotator.claims import ingest
from annotator.management.commands._base import ProjectCommand


class Command(ProjectCommand):
    help = "Import claims from a JSONL file in the pipeline's format."

    def add_arguments(self, parser):
        self.add_project_argument(parser)
        parser.add_argument("path", type=Path)

    def handle(self, *args, project, path, **options):
        target = self.get_project(project)
        with self.open_input(path) as stream:
            report = ingest.claims_import(
                project=target,
                stream=stream,
                source=str(path),
                progress=self.progress("claims"),
            )
        self.print_report("claims", report)
