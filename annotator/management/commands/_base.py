"""Shared bits of the import/export commands."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotator.ingest import ImportReport
from annotator.models import Project


class ProjectCommand(BaseCommand):
    def add_project_argument(self, parser) -> None:
        parser.add_argument("project", help="Project name or id.")

    def get_project(self, ref: str) -> Project:
        queryset = Project.objects.all()
        project = queryset.filter(name=ref).first()
        if project is None and ref.isdigit():
            project = queryset.filter(pk=int(ref)).first()
        if project is None:
            raise CommandError(f"no project named {ref!r}")
        return project

    def progress(self, label: str):
        def report(done: int, total: int) -> None:
            of = f"/{total}" if total else ""
            self.stderr.write(f"\r{label}: {done}{of}", ending="")
            self.stderr.flush()

        return report

    def print_report(self, what: str, report: ImportReport) -> None:
        self.stderr.write("")
        for error in report.errors:
            where = f"{error.source}:{error.line}" if error.line else error.source
            self.stderr.write(self.style.WARNING(f"{where}: {error.message}"))
        self.stdout.write(
            f"{what}: {report.created} created, {report.updated} updated, "
            f"{report.unchanged} unchanged, {len(report.errors)} errors"
        )
        # Some lines refused is a partial success (they are listed above, the
        # rest went in); nothing imported at all fails the command.
        if report.errors and not (report.created or report.updated or report.unchanged):
            raise CommandError(f"no {what} imported: every record was refused")
