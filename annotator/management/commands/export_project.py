from pathlib import Path

from annotator.claims import export
from annotator.management.commands._base import ProjectCommand, failure


class Command(ProjectCommand):
    help = "Write documents.jsonl, claims.jsonl and labels.jsonl of a project."

    def add_arguments(self, parser):
        self.add_project_argument(parser)
        parser.add_argument("--out", type=Path, required=True, help="Output folder.")

    def handle(self, *args, project, out, **options):
        target = self.get_project(project)
        try:
            counts = export.project_export(project=target, out_dir=out)
        except OSError as e:
            raise failure(f"{e.filename or out}: {e.strerror}") from e
        for kind, count in counts.items():
            self.stdout.write(f"{out / (kind + '.jsonl')}: {count} records")
