"""LLM grading runs: the estimate, start, follow and cancel (the endpoints
and who may use them: :mod:`.llm_runs`)."""

from __future__ import annotations

from rest_framework import serializers

from annotator.api.llm_runs import LLMRunSerializer, LLMRunViewSet, run_fields
from annotator.api.serializers import storable_json
from annotator.models import GradingRun
from annotator.runs import grading

_PARAMS_HELP = (
    "Optional LLM settings within the deployment's bounds: temperature, top_p, "
    "json_mode, timeout, max_retries, max_tokens, n, seed. No prices: the "
    "deployment sets them per model (LLM_PRICES), and refuses a request naming one."
)


class GradingRunSerializer(LLMRunSerializer):
    """A run of the LLM grader over a project's unlabelled claims."""

    scorer = serializers.SerializerMethodField(
        help_text='Scorer name its grades are stored under: "llm-grader:<model>".'
    )

    class Meta(LLMRunSerializer.Meta):
        model = GradingRun
        fields = run_fields(model=("scorer",), completion_tokens=("cancel_requested",))
        read_only_fields = fields
        extra_kwargs = {
            **LLMRunSerializer.Meta.extra_kwargs,
            "model": {"help_text": "LLM model grading."},
            "budget": {
                "help_text": "Cap (decimal string); the run stops before the "
                "next batch would take its cost past it."
            },
            "cost_estimate": {
                "help_text": "Estimated cost of grading every gradable "
                "claim, computed at the start (decimal string)."
            },
            "progress_done": {
                "help_text": "Claims processed: graded, or with an unusable "
                "answer (listed in error)."
            },
            "progress_total": {"help_text": "Claims the run set out to grade."},
            "cancel_requested": {
                "help_text": "An admin asked it to stop; it does before its next batch."
            },
            "error": {
                "help_text": "Why it stopped early or failed (first line), then "
                "one line per claim whose answer could not be used."
            },
        }

    def get_scorer(self, run) -> str:
        return grading.scorer_name(run.model)


class GradingEstimateRequestSerializer(serializers.Serializer):
    project = serializers.IntegerField(help_text="Project id.")
    model = serializers.CharField(
        help_text="LLM model name (one of the project's llm_models, if it has any)."
    )
    params = serializers.DictField(
        required=False,
        default=dict,
        validators=[storable_json],
        help_text=f"Optional. {_PARAMS_HELP}",
    )


class GradingRunStartSerializer(GradingEstimateRequestSerializer):
    budget = serializers.DecimalField(
        max_digits=12,
        decimal_places=6,
        help_text="Most the run may spend, more than 0 and at most the "
        "deployment's LLM_RUN_MAX_BUDGET, in its prices' currency.",
    )


class GradingEstimateSerializer(serializers.Serializer):
    project = serializers.IntegerField(help_text="Project id.")
    model = serializers.CharField(help_text="LLM model name.")
    scorer = serializers.CharField(
        help_text='Scorer name the grades would be stored under: "llm-grader:<model>".'
    )
    scorer_version = serializers.CharField(
        help_text="Grader prompt version; a new prompt grades everything again."
    )
    claims = serializers.IntegerField(
        help_text="Claims a run would grade: aligned, outside the gold set, "
        "no expert label, not graded yet by this model and prompt."
    )
    prompt_tokens = serializers.IntegerField(
        help_text="Estimated from the prompts' length (about 4 characters a token)."
    )
    completion_tokens = serializers.IntegerField(
        help_text="Estimated at 100 tokens per claim (the paper's average)."
    )
    cost = serializers.DecimalField(
        max_digits=12,
        decimal_places=6,
        allow_null=True,
        help_text="Estimated cost at the deployment's prices (decimal string); "
        "null for a model it has no price for.",
    )


class GradingRunViewSet(LLMRunViewSet):
    """LLM grading runs labelling unlabelled claims as silver data."""

    serializer_class = GradingRunSerializer
    start_serializer_class = GradingRunStartSerializer
    estimate_request_serializer_class = GradingEstimateRequestSerializer
    estimate_serializer_class = GradingEstimateSerializer
    project_action = "LLM grading"
    create_description = (
        "Start grading; refused without an LLM, for a model the deployment has\n"
        "no price for, with a price in params, a setting or budget outside the\n"
        "deployment's bounds, or while the project has a run pending or running."
    )
    estimate_description = "What a run would grade and roughly cost; starts nothing."

    def run_start(self, project, data, user):
        return grading.grading_run_start(
            project=project,
            model=data["model"],
            budget=data["budget"],
            params=data["params"],
            created_by=user,
        )

    def run_estimate(self, project, data):
        return grading.grading_estimate(project, data["model"], data["params"])

    def run_cancel(self, run):
        return grading.grading_run_cancel(run=run)
