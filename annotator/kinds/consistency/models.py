"""The consistency kind's runs, of the annotator app (its table and
migrations are the app's)."""

from typing import Any

from django.db import models

from annotator.models import LLMRun, Project


class ConsistencyRun(LLMRun):
    """LLM calls for a consistency project's answers (FINCH-ZK), under a
    budget fixed before it starts: other models sampling the answers imported
    without samples (``model`` the reformulator writing the LLM-made prompt
    variants, the samplers in ``params``), or the improver correcting the
    blocks the check flagged (``model`` the improver)."""

    TASK = "annotator.kinds.consistency.tasks.run_consistency"
    EVENT = "consistency"

    class Job(models.TextChoices):
        SAMPLES = "samples", "Sample other models"
        CORRECTIONS = "corrections", "Correct flagged blocks"

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="consistency_runs"
    )
    job = models.CharField(max_length=16, choices=Job.choices, default=Job.SAMPLES)
    usage = models.JSONField(
        default=dict,
        blank=True,
        help_text="Tokens and requests per model: {model: {prompt_tokens, "
        "completion_tokens, requests}}.",
    )

    class Meta(LLMRun.Meta):
        app_label = "annotator"

    def webhook_details(self) -> dict[str, Any]:
        return {**super().webhook_details(), "job": self.job}

    def __str__(self) -> str:
        return f"{self.job} run {self.pk} ({self.status})"
