"""The SafePassage data model.

A Claim is something an LLM said (an extracted field, a RAG answer, a
citation, an answer sentence: the project's ``kind`` says which checker judges
it). Checking finds its evidence and gives it per-scorer scores and a verdict
(what the checker found); Annotations are expert labels on it.
Rows that other rows derive from record what produced them, under unique
constraints, so re-running an import or a check updates instead of duplicating.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any

from django.apps import apps
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.db.models.functions import Random

from annotator.core.allowlists import (
    llm_key_binding_problem,
    scorer_folder_owner,
    validate_llm_api_key_env,
    validate_llm_base_url,
    validate_scorer_source,
)
from annotator.kinds import default_kind, kind_hook
from pipeline.checkers import checker_class, kinds
from pipeline.checkers.base import evidence_problem

if TYPE_CHECKING:
    # Django ships no type information, so to mypy ``models.TextChoices`` is
    # Any and a member such as ``Role.ADMIN = "admin", "Admin"`` reads as the
    # tuple it is written as. This declares what Django's ``ChoicesType``
    # metaclass makes of it: a ``str`` enum member with a ``label``.

    class _ChoicesType(enum.EnumMeta):
        @property
        def choices(cls) -> list[tuple[str, str]]: ...
        @property
        def labels(cls) -> list[str]: ...
        @property
        def names(cls) -> list[str]: ...
        @property
        def values(cls) -> list[str]: ...

    class TextChoices(enum.StrEnum, metaclass=_ChoicesType):
        @property
        def label(self) -> str: ...
        @property
        def value(self) -> str: ...

else:
    TextChoices = models.TextChoices


def _default_align_threshold() -> float:
    """The default of the project column the initial migration makes (now an
    extraction project's option): its migrations still call it."""
    return settings.DEFAULT_ALIGN_THRESHOLD


def _default_nli_threshold() -> float:
    return settings.DEFAULT_NLI_THRESHOLD


_unit_interval = [MinValueValidator(0.0), MaxValueValidator(1.0)]


def checker_kinds() -> list[tuple[str, str]]:
    """``Project.kind`` choices: the checkers registered in the pipeline, so
    adding a checker adds a kind without a migration."""

    return [(kind, checker_class(kind).title) for kind in kinds()]


def reason_choices() -> list[tuple[str, str]]:
    """``Claim.reason`` choices: every registered checker's reasons for
    an unsafe verdict, in its own words (a new checker adds its own without a
    migration)."""

    choices = {"": "None"}
    for kind in kinds():
        choices.update(getattr(checker_class(kind), "reasons", {}))
    return list(choices.items())


def validate_evidence(value) -> None:
    """Evidence is a list of the pipeline's evidence records (a checked JSON
    document, so every kind stores and reads the same shape)."""
    problem = evidence_problem(value)
    if problem:
        raise ValidationError(f"evidence: {problem}")


class QueueStrategy(TextChoices):
    """The orders the labeling queue hands claims out in (each implemented in
    ``annotator.labeling.queue``)."""

    UNCERTAINTY = "uncertainty", "Score nearest the threshold first"
    RANDOM = "random", "Random"
    DISAGREEMENT = "disagreement", "Scorer and evidence disagree first"
    STRATIFIED = "stratified", "Spread over claim types and source models"


def validate_queue_strategy(value: str) -> None:
    if value not in QueueStrategy.values:
        raise ValidationError(
            f"unknown queue strategy {value!r}; "
            f"one of {', '.join(QueueStrategy.values)}"
        )


class RunStatus(TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


#: A run some worker may still be on (or will be); the rest are finished.
ACTIVE_RUN_STATUSES = (RunStatus.PENDING, RunStatus.RUNNING)
FINISHED_RUN_STATUSES = (RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED)


class Verdict(TextChoices):
    """What the check concluded. A claim is never safe on its evidence
    alone: until the project has a scorer, one its checker would pass is
    ``unscored`` (first in the labeling queue), not safe."""

    UNCHECKED = "", "Not checked yet"
    SAFE = "safe", "Safe"
    UNSAFE = "unsafe", "Unsafe"
    UNSCORED = "unscored", "Unscored (no scorer yet)"


def verdict_text(verdict: str, reason: str) -> str:
    """What a check concluded, as a badge says it: an unsafe verdict with
    its reason; an unscored one whose check could not be made names why
    ("Unverifiable" is not waiting for a scorer)."""
    text = Verdict(verdict).label
    if not reason:
        return text
    why = dict(reason_choices()).get(reason, reason)
    return why if verdict == Verdict.UNSCORED else f"{text}: {why}"


#: Claim.uncertainty of an unscored claim: the most uncertain of all, so
#: the queue hands it out first.
UNSCORED_UNCERTAINTY = 0.0


class Reason(TextChoices):
    """The reasons the shared code names; ``reason_choices`` holds them all."""

    NONE = "", "None"
    NOT_IN_DOCUMENT = "not_in_document", "Not in document"
    NOT_SUPPORTED = "not_supported", "Not supported"


class Project(models.Model):
    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    kind = models.CharField(
        max_length=32,
        choices=checker_kinds,
        default=default_kind,
        help_text="What the project checks (a checker of pipeline.checkers, "
        "and the claim partial of the labeling page); chosen when it is created.",
    )
    options = models.JSONField(
        default=dict,
        blank=True,
        help_text="The settings its kind adds (KindHook.project_options): an "
        "extraction project's entity schema, prompt and alignment threshold.",
    )
    llm_base_url = models.URLField(
        blank=True,
        validators=[validate_llm_base_url],
        help_text="OpenAI-compatible endpoint, one of the deployment's LLM_BASE_URLS.",
    )
    llm_models = models.JSONField(
        default=list, blank=True, help_text="Model names extraction runs may use."
    )
    llm_api_key_env = models.CharField(
        max_length=100,
        blank=True,
        validators=[validate_llm_api_key_env],
        help_text="NAME of the environment variable holding the API key on the "
        "workers, one of the deployment's LLM_API_KEY_ENVS; the key itself is "
        "never stored.",
    )
    nli_threshold = models.FloatField(
        default=_default_nli_threshold, validators=_unit_interval
    )
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        through="Membership",
        related_name="projects",
        blank=True,
    )
    # Labeling queue.
    queue_strategy = models.CharField(
        max_length=64,
        default="uncertainty",
        validators=[validate_queue_strategy],
        help_text="Order in which the labeling queue hands out claims: "
        "uncertainty (score nearest the threshold first) or random.",
    )
    overlap_share = models.FloatField(
        default=0.1,
        validators=_unit_interval,
        help_text="Share of claims labelled by several experts, to measure "
        "agreement; every other claim goes to one expert only.",
    )
    overlap_labels = models.PositiveSmallIntegerField(
        default=2,
        validators=[MinValueValidator(2)],
        help_text="How many experts label each overlap claim.",
    )
    gold_share = models.FloatField(
        default=0.1,
        validators=_unit_interval,
        help_text="Share of documents whose claims form the gold test set: "
        "handed out in random order, used to measure scorer versions, never "
        "trained on. Changing it moves documents in or out of the set.",
    )
    retrain_min_labels = models.PositiveIntegerField(
        default=50,
        help_text="Retrain when this many new expert labels (outside the gold "
        "set) have come in since the active scorer was trained.",
    )
    show_machine_scores = models.BooleanField(
        default=False,
        help_text="Show scorer scores and verdicts on the labeling screen "
        "(hidden by default so they do not anchor the experts).",
    )
    uncertainty_threshold = models.FloatField(
        null=True,
        editable=False,
        help_text="The threshold Claim.uncertainty was computed against; "
        "the queue recomputes it when the active threshold differs.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        # Each field's validator sees one field: the key and the endpoint it
        # would be sent to are checked together.
        problem = llm_key_binding_problem(self.llm_api_key_env, self.llm_base_url)
        if problem:
            raise ValidationError({"llm_api_key_env": problem})
        try:
            self.options = kind_hook(self.kind).options_cleaned(self.options, {})
        except ValueError as e:
            raise ValidationError({"options": str(e)}) from e

    def option(self, name: str) -> Any:
        """The value of option ``name`` of the project's kind: the stored one,
        else its default."""
        stored = self.options.get(name)
        if stored is not None:
            return stored
        return kind_hook(self.kind).project_options[name].default()

    def evidence_threshold(self) -> float | None:
        """The threshold the kind keeps evidence scores at (an alignment
        threshold), None where its kind has none."""
        name = kind_hook(self.kind).evidence_threshold
        return self.option(name) if name else None


class Role(TextChoices):
    """What a member may do on one project. Superusers may do everything on
    every project; ``is_staff`` alone grants only the Django admin, where model
    permissions apply."""

    ADMIN = "admin", "Project admin"
    REVIEWER = "reviewer", "Reviewer"
    EXPERT = "expert", "Expert"
    VIEWER = "viewer", "Viewer"


class Membership(models.Model):
    """A user's role on a project. Its table is the one the plain
    ``Project.members`` many-to-many used before roles."""

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="memberships"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=8, choices=Role.choices, default=Role.EXPERT)

    class Meta:
        db_table = "annotator_project_members"
        # The auto-created table's own constraint, under the name Django gave it.
        unique_together = [("project", "user")]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) on {self.project}"


class Document(models.Model):
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="documents"
    )
    external_id = models.CharField(max_length=255)
    text = models.TextField()
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["project", "external_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="document_unique_external_id"
            )
        ]

    def __str__(self) -> str:
        return self.external_id


class Run(models.Model):
    """What every run tracks, of LLM calls or training: status, settings,
    failure, who started it when, the heartbeat its sweep reads, and a
    request to stop. Each
    names the Celery task that executes it (``TASK``): the lifecycle
    (``annotator.runs.lifecycle``) sends it, the sweep sends it again."""

    TASK: str

    status = models.CharField(
        max_length=16, choices=RunStatus.choices, default=RunStatus.PENDING
    )
    params = models.JSONField(
        default=dict,
        blank=True,
        help_text="The run's settings within the deployment's bounds: an LLM "
        "run's LLM settings and a job's options (prices come from LLM_PRICES), "
        "a training run's TrainConfig fields.",
    )
    error = models.TextField(blank=True, help_text="Why the run failed or stopped.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Last sign of life from its worker: the sweep hands an LLM run "
        "silent for LLM_RUN_STALE_SECONDS to another worker, and fails a training "
        "run silent for TRAINING_STALE_SECONDS.",
    )
    finished_at = models.DateTimeField(null=True, blank=True)
    cancel_requested = models.BooleanField(
        default=False,
        help_text="Asked to stop: it stops before its next step (an LLM "
        "call, a training epoch).",
    )

    class Meta:
        abstract = True
        ordering = ["-created_at"]


class LLMRun(Run):
    """What every run of LLM calls adds: the model, progress, token usage,
    its budget and cost. Extraction, grading,
    sampling and a kind's own runs add their own fields; the end of one is a
    webhook's ``EVENT``, with its ``webhook_details()``."""

    EVENT: str

    model = models.CharField(max_length=200, help_text="LLM model name.")
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    cost_estimate = models.DecimalField(
        max_digits=12,
        decimal_places=6,
        null=True,
        blank=True,
        help_text="At the deployment's prices, computed at the start.",
    )
    resumes = models.PositiveSmallIntegerField(
        default=0,
        help_text="Times the sweep handed this run to a worker again; past "
        "LLM_RUN_MAX_RESUMES the run is failed instead.",
    )
    budget = models.DecimalField(
        max_digits=12,
        decimal_places=6,
        null=True,
        blank=True,
        help_text="The run stops before its cost would pass this; null only on "
        "runs started before their kind had budgets (its default then).",
    )
    cost = models.DecimalField(
        max_digits=12,
        decimal_places=6,
        default=0,
        help_text="From the token usage at the deployment's prices.",
    )

    class Meta(Run.Meta):
        abstract = True

    def webhook_details(self) -> dict[str, Any]:
        """What a webhook hears of the run beyond its status and progress."""
        return {"model": self.model, "cost": str(self.cost)}


def llm_run_models() -> list[type[LLMRun]]:
    """Every kind of LLM run installed, a kind's own included."""
    return [model for model in apps.get_models() if issubclass(model, LLMRun)]


class Claim(models.Model):
    """A claim of the project's kind, from ``document``; the check fills in
    what its checker found (the scorer's premise and hypothesis, the evidence,
    the verdict)."""

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="claims"
    )
    document = models.ForeignKey(
        Document, on_delete=models.CASCADE, related_name="claims"
    )
    external_id = models.CharField(max_length=255)
    model = models.CharField(max_length=200, blank=True, help_text="Source LLM.")
    data = models.JSONField(
        default=dict,
        blank=True,
        help_text="The claim's own fields, as its project's checker kind "
        "defines and checks them (ClaimData): an extracted field's type, "
        "value and context, a citation's text and place, a RAG answer and "
        "its query.",
    )
    extra = models.JSONField(
        default=dict, blank=True, help_text="Other fields of the imported record."
    )
    # Filled by the check; cleared when the claim or its document changes.
    hypothesis = models.TextField(
        blank=True, help_text="The claim as the scorer and the expert read it."
    )
    premise = models.TextField(
        blank=True,
        help_text="The evidence text the scorer read the hypothesis against "
        "(for extraction, the aligned span of the document).",
    )
    evidence = models.JSONField(
        default=list,
        blank=True,
        validators=[validate_evidence],
        help_text="The evidence found, deciding first: source, start, end, "
        "text, role, score.",
    )
    evidence_score = models.FloatField(
        null=True,
        blank=True,
        help_text="Score of the deciding evidence (for extraction, the "
        "alignment score), kept as a column for charts and the queue.",
    )
    score = models.FloatField(
        null=True, blank=True, help_text="Score of the scorer that gave the verdict."
    )
    scored_by = models.CharField(max_length=255, blank=True)
    verdict = models.CharField(
        max_length=8, choices=Verdict.choices, default=Verdict.UNCHECKED, blank=True
    )
    reason = models.CharField(
        max_length=32, choices=reason_choices, default=Reason.NONE, blank=True
    )
    details = models.JSONField(
        default=dict,
        blank=True,
        help_text="What the checker found beyond the verdict, for the expert "
        "(for a citation: its status, each check and the case it matched).",
    )
    checked_at = models.DateTimeField(null=True, blank=True)
    pipeline_version = models.CharField(max_length=32, blank=True)
    # Order keys of the labeling queue, indexed so that a hand-out reads the
    # first rows of an index instead of sorting the project.
    uncertainty = models.FloatField(
        null=True,
        editable=False,
        help_text="|score - active threshold|; empty until scored.",
    )
    random_key = models.FloatField(db_default=Random(), editable=False)
    # Queue state kept by database triggers (the initial migration's SQL),
    # whichever path a label takes (the page, imports, the API, the admin, a
    # cascade): the queue indexes hold open claims only, so a hand-out
    # does not walk past every claim already labelled at the front of
    # its order.
    decisive_labels = models.PositiveSmallIntegerField(
        db_default=0,
        editable=False,
        help_text="Safe and unsafe labels; kept by the database.",
    )
    queue_open = models.BooleanField(
        db_default=True,
        editable=False,
        help_text="Needs more labels: fewer decisive labels than the project "
        "asks of it (overlap_labels for its overlap share, else one); kept by "
        "the database.",
    )
    # Any kind's run may make claims (an extraction run, a test kind's), so
    # the run is named by its model and id rather than a key to one table (a
    # run deleted since leaves its id). The model's label, not a content
    # type: a content type's id is cached by every process and changes when
    # the table is emptied and filled again.
    source_run_type = models.CharField(
        max_length=100,
        blank=True,
        help_text="The model of the LLM run that made the claim "
        '("annotator.extractionrun"), if one did; empty for an imported claim.',
    )
    source_run_id = models.BigIntegerField(
        null=True, blank=True, db_index=True, help_text="That run's id."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        # Named "prediction" in earlier releases; the table keeps that name.
        db_table = "annotator_prediction"
        ordering = ["document_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="prediction_unique_external_id"
            )
        ]
        indexes = [
            models.Index(fields=["project", "verdict"]),
            models.Index(fields=["project", "model"]),
            models.Index(fields=["project", "score"]),
            # The queue strategies' orders over open claims (ASC sorts
            # NULLs last, like the uncertainty order: unscored come last).
            models.Index(
                fields=["project", "uncertainty", "id"],
                condition=Q(queue_open=True),
                name="prediction_queue_uncertainty",
            ),
            models.Index(
                fields=["project", "random_key", "id"],
                condition=Q(queue_open=True),
                name="prediction_queue_random",
            ),
            # The check task's work queue: claims not checked yet, or
            # waiting for a rescore (their old verdict kept until then).
            models.Index(
                fields=["project"],
                condition=Q(checked_at=None),
                name="prediction_to_check",
            ),
        ]

    def __str__(self) -> str:
        return self.external_id

    def verdict_text(self) -> str:
        return verdict_text(self.verdict, self.reason)

    def clean(self) -> None:
        super().clean()
        problem = checker_class(self.project.kind).claim_data.problem(self.data)
        if problem:
            raise ValidationError({"data": f"{self.project.kind} claim data {problem}"})


#: ClaimScore.scorer of the LLM grader's verdicts: this plus the model name.
GRADER_SCORER_PREFIX = "llm-grader:"


class ClaimScore(models.Model):
    """One scorer's opinion of one claim; a rescore updates it in place."""

    claim = models.ForeignKey(
        Claim,
        on_delete=models.CASCADE,
        related_name="scores",
        db_column="prediction_id",
    )
    scorer = models.CharField(max_length=255)
    scorer_version = models.CharField(max_length=64, blank=True)
    score = models.FloatField()
    reasoning = models.TextField(
        blank=True, help_text="Why the scorer decided so (the LLM grader's words)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "annotator_predictionscore"
        constraints = [
            models.UniqueConstraint(
                fields=["claim", "scorer", "scorer_version"],
                name="prediction_score_unique_scorer",
            )
        ]

    def __str__(self) -> str:
        return f"{self.scorer}@{self.scorer_version}: {self.score:.3f}"


class Label(models.Model):
    """An expert's label of a claim: safe, unsafe or unsure, with a note and
    a correction. One per expert and claim (a relabel changes it in place);
    an imported label has no expert."""

    class Value(TextChoices):
        SAFE = "safe", "Safe"
        UNSAFE = "unsafe", "Unsafe"
        UNSURE = "unsure", "Unsure"

    class Source(TextChoices):
        UI = "ui", "Labeling UI"
        IMPORT = "import", "Imported file"

    #: The labels that say something (unsure does not): what training, the
    #: gold set and agreement count.
    DECISIVE = (Value.SAFE, Value.UNSAFE)

    claim = models.ForeignKey(
        Claim,
        on_delete=models.CASCADE,
        related_name="labels",
        db_column="prediction_id",
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="labels",
    )
    source = models.CharField(max_length=8, choices=Source.choices, default=Source.UI)
    label = models.CharField(max_length=8, choices=Value.choices)

    class Suggestion(TextChoices):
        ACCEPTED = "accepted", "Accepted"
        REJECTED = "rejected", "Rejected"

    correction = models.JSONField(
        null=True,
        blank=True,
        help_text="The expert's right values for some of the claim's data, "
        "those its kind lets an expert correct (ClaimData.corrects): an "
        "extracted field's value and type, a sentence's text; null if none.",
    )
    suggestion = models.CharField(
        max_length=8,
        choices=Suggestion.choices,
        blank=True,
        help_text="The expert's decision on the correction the app suggested "
        "(a consistency run's improver): accepted, when the correction holds "
        "it, or rejected; empty when there was none or no decision.",
    )
    note = models.TextField(blank=True)
    seconds_spent = models.FloatField(null=True, blank=True)
    guideline_version = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="The project's guideline version the label was made under.",
    )
    extra = models.JSONField(default=dict, blank=True)
    client_id = models.UUIDField(
        null=True,
        blank=True,
        unique=True,
        help_text="Chosen by the client so a retried save is not stored twice.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "annotator_annotation"
        ordering = ["-created_at"]
        constraints = [
            # One current label per expert per claim; relabeling updates it.
            models.UniqueConstraint(
                fields=["claim", "annotator"],
                condition=Q(annotator__isnull=False),
                name="annotation_one_per_annotator",
            ),
            # Re-importing a labels file updates instead of duplicating.
            models.UniqueConstraint(
                fields=["claim"],
                condition=Q(source="import"),
                name="annotation_one_imported",
            ),
        ]
        indexes = [
            models.Index(fields=["claim", "label"]),
            # An expert's recent labels and progress.
            models.Index(fields=["annotator", "-updated_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.label} on {self.claim_id}"


class LabelReceipt(models.Model):
    """Every client_id a label was ever saved under. A relabel moves
    ``Label.client_id`` to the new label; the receipt keeps the old id, so
    a late retry of the first label is recognised as a duplicate instead of
    overwriting the newer decision."""

    client_id = models.UUIDField(primary_key=True)
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    claim = models.ForeignKey(
        Claim,
        on_delete=models.CASCADE,
        related_name="+",
        db_column="prediction_id",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.client_id} by {self.annotator_id}"


class ApiToken(models.Model):
    """An API token. Only its SHA-256 digest is stored (the key is shown once,
    when issued), and it expires."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    digest = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(
        max_length=8, help_text="First characters of the key, to tell tokens apart."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["user", "expires_at"], name="api_token_user_expiry")
        ]

    def __str__(self) -> str:
        return f"{self.prefix}… of {self.user}"


class Lease(models.Model):
    """A claim handed to one expert until ``expires_at``.

    Leases are never the source of truth for "done" (labels are): an
    expired lease is simply ignored, and the next hand-out to the same expert
    renews it in place.
    """

    claim = models.ForeignKey(
        Claim,
        on_delete=models.CASCADE,
        related_name="leases",
        db_column="prediction_id",
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="leases"
    )
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["claim", "annotator"], name="lease_one_per_annotator"
            )
        ]
        indexes = [models.Index(fields=["annotator", "expires_at"])]

    def __str__(self) -> str:
        return f"{self.claim_id} to {self.annotator_id} until {self.expires_at}"


class TrainingRun(Run):
    """Fine-tuning a project's scorer (annotator.training), on the shared
    run lifecycle."""

    TASK = "annotator.tasks.train_scorer"

    class Trigger(TextChoices):
        MANUAL = "manual", "Started by an admin"
        SCHEDULE = "schedule", "Enough new expert labels (beat)"
        DEMO = "demo", "Demo set-up"
        FIRST = "first", "First scorer, before any label"

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="training_runs"
    )
    trigger = models.CharField(
        max_length=16, choices=Trigger.choices, default=Trigger.MANUAL
    )
    base_model = models.CharField(max_length=255, blank=True)
    expert_labels = models.PositiveIntegerField(
        default=0, help_text="Expert labels (outside the gold set) trained on."
    )
    # Live progress, written by the worker as it trains.
    progress = models.FloatField(default=0.0, validators=_unit_interval)
    stage = models.CharField(max_length=32, blank=True)
    epoch = models.PositiveIntegerField(null=True, blank=True)
    loss = models.FloatField(null=True, blank=True)
    val_f1 = models.FloatField(null=True, blank=True)
    log = models.TextField(blank=True)
    metrics = models.JSONField(default=dict, blank=True)

    class Meta(Run.Meta):
        indexes = [models.Index(fields=["project", "status"])]

    def __str__(self) -> str:
        return f"training {self.pk} ({self.status})"


class ScorerModel(models.Model):
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="scorer_models"
    )
    version = models.CharField(max_length=64)
    base_model = models.CharField(max_length=255)
    path = models.CharField(
        max_length=1000,
        validators=[validate_scorer_source],
        help_text="Model folder on the workers (inside SCORER_ROOTS) or a model "
        "name in SCORER_MODELS.",
    )
    label_counts = models.JSONField(default=dict, blank=True)
    threshold = models.FloatField(default=0.5, validators=_unit_interval)
    metrics = models.JSONField(default=dict, blank=True)
    expert_labels = models.PositiveIntegerField(
        default=0, help_text="Expert labels it was trained on (learning curve)."
    )
    gold_f1 = models.FloatField(
        null=True,
        blank=True,
        help_text="F1 flagging unsafe claims on the gold test set, "
        "measured when registered; decides promotion.",
    )
    calibration = models.JSONField(
        default=dict,
        blank=True,
        help_text="Calibration fitted on the gold set "
        "(pipeline.calibration.Calibration.to_json); empty until fitted.",
    )
    operating_point = models.JSONField(
        default=dict,
        blank=True,
        help_text="The operating point the admin applied: target recall of "
        "unsafe, the threshold it gave and its precision, recall and workload "
        "on the gold set; empty while the threshold is the trained one.",
    )
    is_active = models.BooleanField(default=False)
    training_run = models.ForeignKey(
        TrainingRun,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="scorer_models",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "version"], name="scorer_unique_version"
            ),
            models.UniqueConstraint(
                fields=["project"],
                condition=Q(is_active=True),
                name="scorer_one_active_per_project",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project} scorer {self.version}"

    def clean(self) -> None:
        # The path's validator cannot see the row's project: a folder training
        # wrote for another project is never this one's scorer.
        owner = scorer_folder_owner(self.path)
        if owner is not None and owner != self.project_id:
            raise ValidationError(
                {"path": "a folder of another project's scorer versions"}
            )


class GradingRun(LLMRun):
    """The LLM grader labelling unlabelled claims as silver data, under a
    budget fixed before it starts."""

    TASK = "annotator.tasks.run_grading"
    EVENT = "grading"

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="grading_runs"
    )

    def __str__(self) -> str:
        return f"grading {self.pk} with {self.model} ({self.status})"


class Adjudication(models.Model):
    """A reviewer's decision on a claim its experts disagreed on: the
    training and gold label from then on. The experts' labels stay as they
    were, so the disagreement is kept."""

    class Label(TextChoices):
        SAFE = "safe", "Safe"
        UNSAFE = "unsafe", "Unsafe"

    claim = models.OneToOneField(
        Claim,
        on_delete=models.CASCADE,
        related_name="adjudication",
        db_column="prediction_id",
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="adjudications",
    )
    label = models.CharField(max_length=8, choices=Label.choices)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.label} on {self.claim_id} (adjudicated)"


class Guideline(models.Model):
    """One version of a project's labeling guideline, in Markdown: a section
    per entity type or claim kind under a heading of its name. Saving makes
    a new version; labels record the version they were made under."""

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="guidelines"
    )
    version = models.PositiveIntegerField()
    text = models.TextField(help_text="Markdown; rendered without raw HTML.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "version"], name="guideline_unique_version"
            )
        ]

    def __str__(self) -> str:
        return f"{self.project} guideline v{self.version}"


class Webhook(models.Model):
    """A URL a project calls when one of its runs finishes, so a pipeline can
    wait on the app instead of polling. Calls are signed with ``secret``
    (HMAC-SHA256); the URL's host must be in WEBHOOK_ALLOWED_HOSTS."""

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="webhooks"
    )
    url = models.URLField(max_length=1000)
    secret = models.CharField(max_length=128, help_text="Signs every call.")
    events = models.JSONField(
        default=list,
        blank=True,
        help_text="Run kinds to be called for (check, extraction, grading, "
        "training, consistency); empty for all.",
    )
    is_active = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.project} -> {self.url}"


class WebhookDelivery(models.Model):
    """One event sent (or being sent) to a webhook: the delivery log."""

    class Status(TextChoices):
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"

    webhook = models.ForeignKey(
        Webhook, on_delete=models.CASCADE, related_name="deliveries"
    )
    event = models.CharField(max_length=64)
    payload = models.JSONField(default=dict)
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["webhook", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.event} to webhook {self.webhook_id} ({self.status})"
