from pathlib import Path

from django.core.management.base import CommandError

from annotator import ingest
from annotator.models import Project

from ._base import ProjectCommand


class Command(ProjectCommand):
    help = "Import documents from JSONL files and/or .txt files (one document each)."

    def add_arguments(self, parser):
        self.add_project_argument(parser)
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument(
            "--create", action="store_true", help="Create the project if missing."
        )

    def handle(self, *args, project, paths, create, **options):
        if create:
            Project.objects.get_or_create(name=project)
        target = self.get_project(project)
        files = []
        for path in paths:
            members = (
                sorted(p for p in path.rglob("*") if p.is_file())
                if (path.is_dir())
                else [path]
            )
            for member in members:
                try:
                    files.append((member.name, open(member, "rb")))  # noqa: SIM115
                except OSError as e:
                    raise CommandError(f"{member}: {e.strerror}") from e
        try:
            report = ingest.documents_import(
                project=target, files=files, progress=self.progress("documents")
            )
        finally:
            for _, handle in files:
                handle.close()
        self.print_report("documents", report)
