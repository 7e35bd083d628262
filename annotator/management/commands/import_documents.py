from contextlib import ExitStack
from pathlib import Path

from annotator.claims import ingest
from annotator.management.commands._base import ProjectCommand, failure
from annotator.models import Project


class Command(ProjectCommand):
    help = (
        "Import documents from JSONL files (in a project whose checker takes "
        "items, items: a RAG answer with its contexts, a response with its "
        "prompt and samples) and/or .txt files (one document each)."
    )

    def add_arguments(self, parser):
        self.add_project_argument(parser)
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument(
            "--create", action="store_true", help="Create the project if missing."
        )

    def handle(self, *args, project, paths, create, **options):
        members = []
        for path in paths:
            if path.is_dir():
                found = sorted(p for p in path.rglob("*") if p.is_file())
                if not found:
                    raise failure(f"{path}: no files in the folder")
                members.extend(found)
            else:
                members.append(path)
        with ExitStack() as stack:
            # Every file opens before the project is created: a typo in a
            # path leaves nothing behind.
            files = [
                (member.name, stack.enter_context(self.open_input(member)))
                for member in members
            ]
            if create:
                Project.objects.get_or_create(name=project)
            target = self.get_project(project)
            report = ingest.documents_import(
                project=target, files=files, progress=self.progress("documents")
            )
        self.print_report("documents", report)
