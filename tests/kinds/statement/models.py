"""The statement kind's run, in a table of its own app."""

from django.db import models

from annotator.models import LLMRun, Project


class StatementRun(LLMRun):
    """An LLM writing statements about each of a project's documents: they
    become the project's claims, then are checked."""

    TASK = "tests.kinds.statement.tasks.run_statements"
    EVENT = "statements"

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="statement_runs"
    )

    class Meta(LLMRun.Meta):
        pass
