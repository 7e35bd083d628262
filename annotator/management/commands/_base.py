"""Shared bits of the import/export commands.

They exit as ``python -m pipeline`` does: 0 when every input line was used, 1
when some lines were skipped (each on stderr as ``file:line: problem``; the
rest went in), 2 on a usage error or when nothing could be done (a missing
file, an unknown project, nothing imported).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from django.core.management.base import BaseCommand, CommandError

from annotator.claims.ingest import ImportReport, Outcome
from annotator.models import Project

EXIT_STATUS = {Outcome.COMPLETE: 0, Outcome.PARTIAL: 1, Outcome.REFUSED: 2}


def failure(message: str) -> CommandError:
    """The error that stops a command with nothing done: exit status 2."""
    return CommandError(message, returncode=EXIT_STATUS[Outcome.REFUSED])


class ProjectCommand(BaseCommand):
    def add_project_argument(self, parser) -> None:
        parser.add_argument("project", help="Project name or id.")

    def get_project(self, ref: str) -> Project:
        queryset = Project.objects.all()
        project = queryset.filter(name=ref).first()
        if project is None and ref.isdigit():
            project = queryset.filter(pk=int(ref)).first()
        if project is None:
            raise failure(f"no project named {ref!r}")
        return project

    def open_input(self, path: Path) -> IO[bytes]:
        try:
            return open(path, "rb")  # noqa: SIM115
        except OSError as e:
            raise failure(f"{path}: {e.strerror}") from e

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
        self.finish(report.outcome, what=what, done="imported")

    def finish(self, outcome: Outcome, *, what: str, done: str) -> None:
        """Exit by ``outcome``, once the skipped lines are on stderr: returns
        when every line was used, else raises the CommandError that
        ``manage.py`` turns into exit status 1 or 2 (``call_command`` raises
        it too, with the status as its ``returncode``)."""
        if outcome is Outcome.COMPLETE:
            return
        message = (
            f"some {what} skipped (listed above); the others were {done}"
            if outcome is Outcome.PARTIAL
            else f"no {what} {done}: every record was refused"
        )
        raise CommandError(message, returncode=EXIT_STATUS[outcome])
