"""Serializers. Every field carries help_text: it is the OpenAPI documentation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.apps import apps
from rest_framework import serializers

from annotator.claims import pdfs
from annotator.core import allowlists
from annotator.kinds import default_kind, kind_hook
from annotator.labeling import labels, queue
from annotator.models import (
    Claim,
    ClaimScore,
    Document,
    Label,
    Membership,
    Project,
    ScorerModel,
    TrainingRun,
)
from annotator.projects import access, services
from annotator.training.calibration import calibration_summary
from pipeline.jsonl import text_problem, value_problem


def storable_json(value) -> None:
    """A JSON field's validator: refuses what Postgres would refuse or the
    API could not send back (NUL, lone surrogates, NaN, deep nesting)."""

    problem = value_problem(value)
    if problem:
        raise serializers.ValidationError(f"the value {problem}")


class TextField(serializers.CharField):
    """A CharField that takes JSON strings only (5 is not the text "5") and
    refuses what Postgres cannot store (NUL, lone surrogates)."""

    default_error_messages = {"not_text": "Must be text (a JSON string)."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("not_text")
        problem = text_problem(data)
        if problem:
            raise serializers.ValidationError(f"the text {problem}")
        return super().to_internal_value(data)


class MembershipSerializer(serializers.ModelSerializer):
    username = serializers.CharField(
        source="user.get_username", read_only=True, help_text="The member's name."
    )

    class Meta:
        model = Membership
        fields = ["user", "username", "role"]
        extra_kwargs = {
            "user": {"help_text": "User id."},
            "role": {
                "help_text": "admin (settings, imports, runs, scorers, every "
                "label), expert (labels; sees only their own labels) or viewer "
                "(reads claims)."
            },
        }


class ProjectSerializer(serializers.ModelSerializer):
    members = MembershipSerializer(
        source="memberships",
        many=True,
        read_only=True,
        help_text="Members and their roles; change them with the members action.",
    )

    class Meta:
        model = Project
        fields = [
            "id",
            "name",
            "kind",
            "description",
            "options",
            "llm_base_url",
            "llm_models",
            "llm_api_key_env",
            "nli_threshold",
            "queue_strategy",
            "overlap_share",
            "overlap_labels",
            "show_machine_scores",
            "members",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["created_at", "updated_at"]
        extra_kwargs = {
            "id": {"help_text": "Project id."},
            "name": {"help_text": "Unique project name."},
            "description": {"help_text": "Free text for the team."},
            "options": {
                "validators": [storable_json],
                "help_text": "The settings the project's kind adds (an extraction "
                "project's entity_schema, extraction_prompt and align_threshold): "
                "those sent are checked and put in the stored ones; every one "
                "has a default.",
            },
            "llm_models": {"validators": [storable_json]},
            "nli_threshold": {
                "help_text": "Score below which an aligned claim is unsafe "
                "when the project has no active scorer of its own."
            },
            "llm_base_url": {
                "help_text": "OpenAI-compatible endpoint: one of the deployment's "
                "LLM_BASE_URLS."
            },
            "llm_api_key_env": {
                "help_text": "Environment variable on the workers holding the API "
                "key: one of the deployment's LLM_API_KEY_ENVS, each sent only to "
                "the endpoints the deployment bound it to."
            },
            "created_at": {"help_text": "When the project was created."},
            "updated_at": {"help_text": "Last change."},
        }

    def to_internal_value(self, data):
        # A kind's options were fields of every project before this release:
        # one sent at the top level is still read, for one release.
        if isinstance(data, Mapping):
            kind = data.get("kind") or getattr(self.instance, "kind", None)
            hook = kind_hook(kind if isinstance(kind, str) else default_kind())
            old = {k: data[k] for k in hook.project_options if k in data}
            if old:
                sent = data.get("options")
                data = {k: v for k, v in data.items() if k not in old}
                data["options"] = {**old, **(sent if isinstance(sent, dict) else {})}
        return super().to_internal_value(data)

    def validate(self, attrs):
        # The key and the endpoint it would be sent to, as they will be stored.
        url, name = (
            attrs.get(field, getattr(self.instance, field, ""))
            for field in ("llm_base_url", "llm_api_key_env")
        )
        problem = allowlists.llm_key_binding_problem(name, url)
        if problem:
            raise serializers.ValidationError({"llm_api_key_env": problem})
        if "options" in attrs:
            kind = attrs.get("kind") or getattr(self.instance, "kind", default_kind())
            stored = self.instance.options if self.instance else {}
            try:
                kind_hook(kind).options_cleaned(attrs["options"], stored)
            except ValueError as e:
                raise serializers.ValidationError({"options": str(e)}) from e
        return attrs

    def validate_name(self, value):
        return services.project_name_validate(value)

    def validate_kind(self, value):
        if self.instance is not None and value != self.instance.kind:
            raise serializers.ValidationError(
                "a project's kind is chosen when it is created: its claims were "
                "made for that checker"
            )
        return value


class DocumentSerializer(serializers.ModelSerializer):
    claim_count = serializers.IntegerField(
        read_only=True, help_text="Claims on this document."
    )

    class Meta:
        model = Document
        fields = [
            "id",
            "project",
            "external_id",
            "text",
            "metadata",
            "claim_count",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "id": {"help_text": "Database id."},
            "project": {"help_text": "Project id."},
            "external_id": {"help_text": "The document's id in the imported files."},
            "text": {"help_text": "Full text; alignment offsets index into it."},
            "metadata": {"help_text": "Free-form metadata from the import."},
            "created_at": {"help_text": "First import."},
            "updated_at": {"help_text": "Last change."},
        }


class DocumentUploadSerializer(serializers.Serializer):
    project = serializers.IntegerField(help_text="Project id to import into.")
    files = serializers.ListField(
        # An empty file is reported by name in the import report, not a 400
        # that would turn the other files away with it.
        child=serializers.FileField(allow_empty_file=True),
        allow_empty=False,
        help_text="JSONL files (one {id, text, metadata} record a line), CSV files "
        "(id,text columns; any other column is metadata) and/or plain-text files "
        "(one document each, id = file name without extension), and PDF files "
        "(the same, with the text of each page and its offsets in the metadata: "
        "PDF_MAX_PAGES pages at most; a scanned or password-protected PDF is "
        "reported, not imported). In a provenance "
        "project JSONL files hold RAG items, one {id, query, answer, contexts, "
        "label?} a line: each its document (the contexts) and its claim (the "
        "answer); a label is stored as an imported label. In a consistency "
        "project they hold answers, one {id, prompt, response, samples?} a "
        "line: each its document (the response, with the prompt and samples), "
        "whose sentences the check finds and judges.",
    )


class JsonlUploadSerializer(serializers.Serializer):
    project = serializers.IntegerField(help_text="Project id to import into.")
    file = serializers.FileField(
        help_text="A JSONL file in the pipeline's format; claims may also be "
        "a .csv file with id,document_id,type,value,context[,model] columns."
    )


class LineErrorSerializer(serializers.Serializer):
    source = serializers.CharField(help_text="File the error is in.")
    line = serializers.IntegerField(
        allow_null=True, help_text="1-based line number (null for a whole file)."
    )
    message = serializers.CharField(help_text="What is wrong with it.")


class ImportReportSerializer(serializers.Serializer):
    created = serializers.IntegerField(help_text="Rows created.")
    updated = serializers.IntegerField(help_text="Existing rows changed (upserts).")
    unchanged = serializers.IntegerField(help_text="Rows already identical.")
    errors = LineErrorSerializer(
        many=True, help_text="Lines or files skipped; the others were imported."
    )


class ClaimScoreSerializer(serializers.ModelSerializer):
    class Meta:
        model = ClaimScore
        fields = ["scorer", "scorer_version", "score", "reasoning", "updated_at"]
        extra_kwargs = {
            "scorer": {"help_text": "Scorer name."},
            "reasoning": {
                "help_text": "Why it decided so (the LLM grader's words); "
                "empty for NLI scorers."
            },
            "scorer_version": {"help_text": "Scorer model version."},
            "score": {"help_text": "p(evidence supports the hypothesis)."},
            "updated_at": {"help_text": "When it was computed."},
        }


class ClaimSerializer(serializers.ModelSerializer):
    document_external_id = serializers.CharField(
        source="document.external_id",
        read_only=True,
        help_text="The document's id in the imported files.",
    )
    scores = ClaimScoreSerializer(
        many=True, read_only=True, help_text="Every scorer's score for it."
    )
    labelled = serializers.BooleanField(
        read_only=True, help_text="Whether any expert label exists."
    )
    source_run = serializers.IntegerField(
        source="source_run_id",
        read_only=True,
        allow_null=True,
        help_text="The id of the LLM run that made it (source_run_type says "
        "which kind of run); null for an imported claim.",
    )
    source_run_type = serializers.SerializerMethodField(
        help_text='The kind of run that made it ("extraction run"), or null.'
    )

    #: Left out for members who may not see machine scores on the project
    #: (Project.show_machine_scores off, and not its admin).
    MACHINE_FIELDS = ("score", "scored_by", "scores", "verdict", "reason")

    def get_source_run_type(self, claim) -> str | None:
        if not claim.source_run_type:
            return None
        try:
            return str(apps.get_model(claim.source_run_type)._meta.verbose_name)
        except LookupError:  # a kind since removed from KIND_APPS
            return claim.source_run_type

    def to_representation(self, instance):
        data = super().to_representation(instance)
        if not self._machine_scores_visible(instance.project_id):
            for name in self.MACHINE_FIELDS:
                data.pop(name, None)
        # Evidence in a PDF's text names its page (page, or pages across a
        # break, and page_label); the document comes with the row.
        document = instance.document
        data["evidence"] = pdfs.evidence_paged(
            data["evidence"] or [],
            document=document.external_id,
            table=pdfs.page_table(document.metadata, len(document.text)),
        )
        return data

    def _machine_scores_visible(self, project_id: int) -> bool:
        # One lookup per project per response, not per row.
        cache = self.context.setdefault("machine_scores_visible", {})
        if project_id not in cache:
            user = self.context["request"].user
            cache[project_id] = access.machine_scores_visible(
                user, Project.objects.get(pk=project_id)
            )
        return cache[project_id]

    class Meta:
        model = Claim
        fields = [
            "id",
            "project",
            "document",
            "document_external_id",
            "external_id",
            "model",
            "data",
            "extra",
            "hypothesis",
            "premise",
            "evidence",
            "evidence_score",
            "score",
            "scored_by",
            "scores",
            "verdict",
            "reason",
            "checked_at",
            "pipeline_version",
            "source_run",
            "source_run_type",
            "labelled",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "id": {"help_text": "Database id."},
            "project": {"help_text": "Project id."},
            "document": {"help_text": "Document database id."},
            "external_id": {"help_text": "The claim's id in imports/exports."},
            "hypothesis": {
                "help_text": "The claim as the scorer reads it; for extraction "
                'h(y) = "{Entity Type}: {value}".'
            },
            # premise, evidence_score: the model's help texts.
            "evidence": {
                "help_text": "The evidence found, deciding first: source, start, "
                "end, text, role, score; in a document with pages (a PDF's), page "
                "(or pages, across a page break) and page_label."
            },
            "verdict": {"help_text": "safe, unsafe, or empty while not checked."},
            "reason": {
                "help_text": "Why unsafe, in the project checker's words (its "
                "reasons: an extracted field's not_in_document or not_supported, "
                "a citation's no_such_case...); empty when safe."
            },
            "checked_at": {"help_text": "When the verdict was computed."},
            "pipeline_version": {"help_text": "pipeline.__version__ of the check."},
        }


class LabelableClaimField(serializers.PrimaryKeyRelatedField):
    """A claim the requesting user may label. Any other id, missing or of
    another project, gets the same answer, so ids cannot be probed."""

    default_error_messages = {
        "required": "This field is required.",
        "does_not_exist": "no such claim",
        "incorrect_type": "must be a claim id",
    }

    def get_queryset(self):
        request = self.context.get("request")
        if request is None:
            return Claim.objects.none()
        return Claim.objects.filter(
            project__in=access.projects_for(request.user, roles=access.LABEL)
        )

    def to_internal_value(self, data):
        # An id out of bigint's range would be a database error, not a miss.
        if isinstance(data, int) and not isinstance(data, bool) and data >= 2**63:
            self.fail("does_not_exist")
        return super().to_internal_value(data)


#: Request fields an earlier release named otherwise (the prediction is now
#: the claim), still read for one release where the new name is absent.
OLD_FIELD_NAMES = {"prediction": "claim"}


class OldFieldNames(serializers.Serializer):
    """A serializer that reads a request's old field names as the new ones."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            renamed = {
                new: data[old]
                for old, new in OLD_FIELD_NAMES.items()
                if old in data and new not in data
            }
            if renamed:
                data = {k: v for k, v in data.items() if k not in OLD_FIELD_NAMES}
                data |= renamed
        return super().to_internal_value(data)


CORRECTION_HELP = (
    "The right values of the claim's data fields that are wrong, of those its "
    "kind lets an expert correct: an extracted field's value and type, a "
    "citation, a RAG answer or a sentence; at most 10,000 characters as JSON "
    "and 20 levels deep, no NUL or lone surrogates. Null: no correction."
)


def _old_corrected_type():
    return serializers.CharField(
        required=False,
        allow_blank=True,
        write_only=True,
        help_text="Deprecated, read for one release where correction is absent: "
        "the corrected type, as correction's group field.",
    )


def _old_corrected_value():
    return serializers.JSONField(
        required=False,
        allow_null=True,
        write_only=True,
        help_text="Deprecated, read for one release where correction is absent: "
        "the corrected value, as the correction of what the claim says.",
    )


class LabelSerializer(OldFieldNames, serializers.ModelSerializer):
    """An expert's label of a claim, with its note and correction."""

    annotator = serializers.SlugRelatedField(
        slug_field="username", read_only=True, help_text="Who labelled it."
    )
    claim = LabelableClaimField(help_text="Claim database id.")
    corrected_type = _old_corrected_type()
    corrected_value = _old_corrected_value()

    class Meta:
        model = Label
        fields = [
            "id",
            "claim",
            "annotator",
            "source",
            "label",
            "correction",
            "corrected_type",
            "corrected_value",
            "suggestion",
            "note",
            "seconds_spent",
            "guideline_version",
            "client_id",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "annotator", "source", "created_at", "updated_at"]
        # Uniqueness (client_id, one label per annotator) is the service's job:
        # a repeated client_id returns the stored label instead of a 400.
        validators: list[Any] = []
        extra_kwargs = {
            "client_id": {
                "validators": [],
                "help_text": "A UUID chosen by the client; resending it is safe.",
            },
            "id": {"help_text": "Database id."},
            "source": {"help_text": "ui or import."},
            "label": {"help_text": "safe, unsafe or unsure."},
            "correction": {"help_text": CORRECTION_HELP},
            "suggestion": {
                "help_text": "accepted (the correction holds the suggested "
                "one) or rejected; empty without a decision."
            },
            "note": {"help_text": "Free-text note for other experts."},
            "seconds_spent": {"help_text": "Time the expert spent on it."},
            "guideline_version": {
                "min_value": 1,
                "max_value": 2**31 - 1,
                "help_text": "The version of the project's guideline the label "
                "was made under; a version the project does not have is refused. "
                "Left out or null when saving: the latest version.",
            },
            "created_at": {"help_text": "First saved."},
            "updated_at": {"help_text": "Last changed."},
        }


class ScorerModelSerializer(serializers.ModelSerializer):
    calibration = serializers.SerializerMethodField(
        help_text="The gold-set calibration's summary, null until fitted: "
        "method, by_type (types with their own calibrator), n, n_unsafe, "
        "ece_raw, ece_calibrated (on the labels it was fitted on), ece_held_out "
        "(two-fold by document), fitted_at."
    )

    class Meta:
        model = ScorerModel
        fields = [
            "id",
            "project",
            "version",
            "base_model",
            "path",
            "label_counts",
            "threshold",
            "metrics",
            "expert_labels",
            "gold_f1",
            "calibration",
            "operating_point",
            "is_active",
            "training_run",
            "created_at",
        ]
        # Only the threshold may change: a scorer's folder and project are
        # fixed where it was registered (SCORER_ROOTS), never by an API call.
        read_only_fields = [f for f in fields if f != "threshold"]
        extra_kwargs = {
            "id": {"help_text": "Scorer id."},
            "project": {"help_text": "Project id."},
            "version": {"help_text": "Version, unique within the project (v1, v2...)."},
            "base_model": {"help_text": "Model it was fine-tuned from."},
            "path": {"help_text": "Model folder on the workers."},
            "label_counts": {
                "help_text": "Training pairs: human_train, human_train_unsafe, "
                "validation, silver, silver_unsafe."
            },
            "threshold": {"help_text": "Decision threshold on its score."},
            "metrics": {
                "help_text": "validation and gold ({n, precision, recall, f1, "
                "accuracy, confusion}), active_gold (the then active version on "
                "the same gold labels), promotion {promoted, reason}, stages, "
                "device, train_seconds."
            },
            "expert_labels": {
                "help_text": "Expert labels (outside the gold set) it was trained "
                "on: the x axis of the learning curve."
            },
            "gold_f1": {
                "help_text": "F1 flagging unsafe on the gold test set when "
                "registered; null when the gold set had no labels."
            },
            "operating_point": {
                "help_text": "The operating point applied: target_recall, "
                "threshold, gold {recall, precision, flagged, n, n_unsafe}, "
                "workload {flagged, total, fraction...}, applied_at; empty while "
                "the threshold is the trained one (or one set by hand)."
            },
            "is_active": {"help_text": "The project's current scorer (one at most)."},
            "training_run": {"help_text": "Training run that produced it."},
            "created_at": {"help_text": "When it was registered."},
        }

    def get_calibration(self, scorer) -> dict | None:
        return calibration_summary(scorer)


class TrainingRunSerializer(serializers.ModelSerializer):
    class Meta:
        model = TrainingRun
        fields = [
            "id",
            "project",
            "status",
            "trigger",
            "base_model",
            "params",
            "expert_labels",
            "progress",
            "stage",
            "epoch",
            "loss",
            "val_f1",
            "heartbeat_at",
            "cancel_requested",
            "log",
            "metrics",
            "error",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "id": {"help_text": "Training run id."},
            "project": {"help_text": "Project id."},
            "status": {
                "help_text": "pending, running, succeeded, failed or cancelled."
            },
            "trigger": {
                "help_text": "manual (an admin), schedule (enough new expert "
                "labels) or demo."
            },
            "base_model": {"help_text": "Model fine-tuned."},
            "params": {"help_text": "TrainConfig overrides given at the start."},
            "expert_labels": {
                "help_text": "Expert labels (outside the gold set) trained on."
            },
            "progress": {"help_text": "Fraction done, 0 to 1."},
            "stage": {
                "help_text": "preparing, silver pairs, loading, silver, human, "
                "evaluating, done."
            },
            "epoch": {"help_text": "Epoch of the stage (0: before training)."},
            "loss": {"help_text": "Training loss of the latest step."},
            "val_f1": {"help_text": "Validation F1 after the latest epoch."},
            "heartbeat_at": {
                "help_text": "Last sign of life from the worker; a silent run is "
                "marked failed after TRAINING_STALE_SECONDS."
            },
            "cancel_requested": {
                "help_text": "Cancel was asked; the worker stops at its next step."
            },
            "log": {"help_text": "Readable log, one timestamped line per event."},
            "metrics": {
                "help_text": "When succeeded: scorer (id), version, promoted, "
                "reason, gold and validation metrics."
            },
            "error": {"help_text": "Why it failed."},
            "created_by": {"help_text": "User id who started it (null: beat)."},
            "created_at": {"help_text": "When it was requested."},
            "started_at": {"help_text": "When a worker picked it up."},
            "finished_at": {"help_text": "When it ended."},
        }


class TrainingRunStartSerializer(serializers.Serializer):
    project = serializers.IntegerField(help_text="Project id.")
    params = serializers.DictField(
        required=False,
        default=dict,
        validators=[storable_json],
        help_text="TrainConfig fields overriding the deployment's defaults, e.g. "
        '{"human_epochs": 4, "base": "cross-encoder/nli-deberta-v3-base"}. '
        "base: a model in SCORER_MODELS, a folder in SCORER_ROOTS, or one of the "
        "project's own scorer versions by its id (an integer). stages: "
        '["silver"] learns from silver pairs alone and reads no expert label '
        '(a learning curve\'s 0), ["human"] from the expert labels alone.',
    )


# --- labeling ----------------------------------------------------------------


class QueueNextSerializer(serializers.Serializer):
    count = serializers.IntegerField(
        min_value=1,
        max_value=100,
        required=False,
        help_text="How many claims to lease (default LABEL_BATCH_SIZE).",
    )
    exclude = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        default=list,
        max_length=1000,
        help_text="Claim ids the page already holds or has unsent labels for.",
    )


class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(help_text="Labels you gave on this project.")
    last_hour = serializers.IntegerField(
        help_text="Labels given or changed in the last hour."
    )
    per_hour = serializers.FloatField(
        allow_null=True,
        help_text="Pace: 3600 / mean seconds per label over your last 200 labels.",
    )
    remaining = serializers.IntegerField(
        help_text="Checked claims still needing a label from you (whoever holds "
        f"them now), counted up to {queue.REMAINING_COUNTED:,}."
    )
    remaining_more = serializers.BooleanField(
        help_text="Whether more claims than ``remaining`` are left (it stopped "
        "counting)."
    )
    unchecked = serializers.IntegerField(
        help_text="Claims still needing labels that wait for their check: "
        "experts get a claim once it is checked."
    )
    claims = serializers.BooleanField(help_text="Whether the project has any claim.")


class LabelingItemSerializer(serializers.Serializer):
    """Documentation only: items are built by payload.labeling_items."""

    id = serializers.IntegerField(help_text="Claim id.")
    external_id = serializers.CharField(help_text="Claim id in imports/exports.")
    model = serializers.CharField(help_text="Source LLM.")
    type = serializers.CharField(
        help_text="The claim's type: an extracted field's entity type, else "
        "its kind's one type (case_citation, rag_answer...)."
    )
    type_display = serializers.CharField(help_text="Entity type, readable.")
    value = serializers.JSONField(help_text="Extracted value (string or payload).")
    value_display = serializers.CharField(help_text="The value rendered readably.")
    hypothesis = serializers.CharField(
        help_text="The claim as the scorer reads it (an extracted field's "
        'h(y) = "{Entity Type}: {value}").'
    )
    context = serializers.CharField(help_text="The text the LLM quoted as evidence.")
    premise = serializers.CharField(help_text="The evidence text the scorer read.")
    evidence = serializers.ListField(
        help_text="Evidence found, deciding first: source, start, end (offsets "
        "into the source), text, role, score; in a document with pages (a PDF's), "
        "page (or pages, across a page break) and page_label."
    )
    evidence_score = serializers.FloatField(
        help_text="Score of the deciding evidence (alignment, for extraction)."
    )
    document = serializers.DictField(
        help_text="id, external_id, length, and window_text starting at window_start: "
        "a few hundred characters around the span (in a PDF, within the span's "
        "page(s)); pages (the pages the window shows, [] without a page table), "
        "page_label and page_count (null without a page table)."
    )
    siblings = serializers.ListField(
        child=serializers.DictField(),
        help_text="Claims on the same document: id, hypothesis, my_label.",
    )
    overlap = serializers.BooleanField(
        help_text="Labelled by several experts to measure agreement."
    )
    my_label = serializers.DictField(
        allow_null=True, help_text="Your current label on it, if any."
    )
    machine = serializers.DictField(
        required=False,
        help_text="Scores and verdict; only when the project shows machine scores.",
    )
    why = serializers.DictField(
        help_text="Why the item is in front of the expert, shown even when scores "
        "are hidden: code (gold, unchecked, unscored, not_in_document, "
        "not_supported, close_call, spot_check) and text."
    )
    context_found = serializers.BooleanField(
        allow_null=True,
        help_text="False when the quoted context was not found in the document; "
        "null before the check.",
    )


class QueueItemsSerializer(serializers.Serializer):
    items = LabelingItemSerializer(many=True, help_text="Leased claims, in order.")
    lease_seconds = serializers.IntegerField(help_text="How long each lease lasts.")


class LabelInSerializer(OldFieldNames, serializers.Serializer):
    """One label from the labeling page's outbox."""

    client_id = serializers.UUIDField(
        help_text="A UUID chosen by the page; resending the same label is safe."
    )
    claim = serializers.IntegerField(help_text="Claim id.")
    label = serializers.ChoiceField(
        choices=Label.Value.choices, help_text="safe, unsafe or unsure."
    )
    note = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=labels.LABEL_NOTE_MAX_CHARS,
        help_text="Free text, at most 10,000 characters.",
    )
    correction = serializers.JSONField(
        required=False, allow_null=True, help_text=CORRECTION_HELP
    )
    corrected_type = _old_corrected_type()
    corrected_value = _old_corrected_value()
    suggestion = serializers.ChoiceField(
        choices=Label.Suggestion.choices,
        required=False,
        allow_blank=True,
        help_text="The expert's decision on the suggested correction shown "
        "(a consistency run's): accepted, with it sent as the correction, "
        "or rejected.",
    )
    guideline_version = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=2**31 - 1,
        help_text="The version of the project's guideline the label was made "
        "under (the labeling page sends the one it shows); a version the "
        "project does not have is refused. Left out or null: the latest.",
    )
    seconds_spent = serializers.FloatField(
        required=False,
        allow_null=True,
        min_value=0,
        help_text="Seconds the claim was on screen before the decision.",
    )


class LabelsInSerializer(serializers.Serializer):
    """The batch as documented. The view reads it with LabelsBatchSerializer
    and checks each label on its own (LabelInSerializer): a bad label gets an
    error result, the others are stored."""

    labels = LabelInSerializer(
        many=True,
        allow_empty=False,
        max_length=labels.LABELS_BATCH_MAX,
        help_text="Labels in the order they were given. Labels past the 500th "
        "are not processed: each gets an error result, to send again.",
    )


class LabelsBatchSerializer(serializers.Serializer):
    labels = serializers.ListField(
        allow_empty=False, help_text="Labels, each checked on its own."
    )


class LabelResultSerializer(serializers.Serializer):
    client_id = serializers.CharField(help_text="The label's client id.")
    status = serializers.CharField(
        help_text="created; updated (replaced your earlier label of the claim); "
        "duplicate (this client_id was processed before: a retry, or a stale "
        "resend; nothing changed); error (see error; not stored).",
    )
    id = serializers.IntegerField(
        allow_null=True,
        help_text="Your current label of the claim (null after an undo).",
    )
    claim = serializers.IntegerField(allow_null=True, help_text="Claim id.")
    error = serializers.CharField(help_text="Why it was not stored.")


class LabelsOutSerializer(serializers.Serializer):
    results = LabelResultSerializer(
        many=True, help_text="One per label sent, in order."
    )


class UndoOutSerializer(serializers.Serializer):
    claim = serializers.IntegerField(
        allow_null=True,
        help_text="The claim whose label was deleted (leased back to you); "
        "null when there was nothing to delete.",
    )


class MyLabelSerializer(serializers.ModelSerializer):
    hypothesis = serializers.SerializerMethodField(
        help_text="The claim's hypothesis h(y)."
    )
    document_external_id = serializers.CharField(
        source="claim.document.external_id",
        read_only=True,
        help_text="The document's id.",
    )

    class Meta:
        model = Label
        fields = [
            "id",
            "claim",
            "label",
            "note",
            "correction",
            "suggestion",
            "seconds_spent",
            "client_id",
            "hypothesis",
            "document_external_id",
            "updated_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "id": {"help_text": "Label id."},
            "claim": {"help_text": "Claim id."},
            "label": {"help_text": "safe, unsafe or unsure."},
            "note": {"help_text": "Your note."},
            "correction": {"help_text": "Your correction of the claim's data."},
            "suggestion": {"help_text": "Your decision on the suggested correction."},
            "seconds_spent": {"help_text": "Seconds spent on it."},
            "client_id": {"help_text": "The page's id for this label."},
            "updated_at": {"help_text": "Last change."},
        }

    def get_hypothesis(self, label) -> str:
        claim = label.claim
        return self.context["statement"](claim.hypothesis, claim.data)
