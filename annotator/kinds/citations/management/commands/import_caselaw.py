from pathlib import Path

from annotator.kinds.citations import caselaw
from annotator.management.commands._base import ProjectCommand


class Command(ProjectCommand):
    help = (
        "Import court opinions (JSONL: id, case_name, citations, text, pages...) "
        "into the case-law store every citation project is checked against; "
        "with --index, citation-index lines (citation, case_name, date) of "
        "cases whose text is not held."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument(
            "--index", action="store_true", help="The file is a citation index."
        )

    def handle(self, *args, path, index, **options):
        importer = caselaw.index_import if index else caselaw.opinions_import
        with self.open_input(path) as stream:
            report = importer(stream=stream, name=path.name)
        self.print_report("index entries" if index else "opinions", report)
