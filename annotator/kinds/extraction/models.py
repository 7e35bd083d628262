"""The extraction kind's runs, of the annotator app (their tables and
migrations are the app's); the claims a run made name it (``source_run``)."""

from django.db import models

from annotator.models import Document, LLMRun, Project, RunStatus


class ExtractionRun(LLMRun):
    TASK = "annotator.kinds.extraction.tasks.run_extraction"
    EVENT = "extraction"

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="extraction_runs"
    )

    class Meta(LLMRun.Meta):
        app_label = "annotator"
        indexes = [models.Index(fields=["project", "status"])]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.model}, {self.status})"


class ExtractionItem(models.Model):
    """One document of a run; the unit of work, retry and error reporting."""

    run = models.ForeignKey(
        ExtractionRun, on_delete=models.CASCADE, related_name="items"
    )
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(
        max_length=16, choices=RunStatus.choices, default=RunStatus.PENDING
    )
    error = models.TextField(blank=True)
    claim_count = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "annotator"
        constraints = [
            models.UniqueConstraint(
                fields=["run", "document"], name="extraction_item_unique_document"
            )
        ]
        indexes = [models.Index(fields=["run", "status"])]

    def __str__(self) -> str:
        return f"run {self.run_id} document {self.document_id}"
