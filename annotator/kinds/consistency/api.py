"""Consistency runs (sampling other models, correcting flagged blocks): the
estimate, start, follow and cancel (the endpoints and who may use them:
:mod:`.llm_runs`)."""

from __future__ import annotations

from rest_framework import serializers

from annotator.api.llm_runs import LLMRunSerializer, LLMRunViewSet, run_fields
from annotator.api.serializers import storable_json
from annotator.kinds.consistency import consistency_runs
from annotator.kinds.consistency.models import ConsistencyRun

_PARAMS_HELP = (
    "For job samples: samplers (a non-empty list of the project's llm_models), "
    "and optionally reformulator (the model writing the LLM-made prompt "
    "variants; the first sampler by default), samples per answer (10), seed "
    "(0), variants (all of identity, cot, long_answer, rephrase, expand_before, "
    "expand_after, break_down). For job corrections: improver (a model of the "
    "project), and optionally summaries (true: summarize each block's errors "
    "first) and summarizer (the improver by default). For both: LLM settings "
    "temperature, max_tokens, max_concurrency, timeout, max_retries, within the "
    "deployment's bounds. No prices: the deployment sets them per model "
    "(LLM_PRICES; a run books every call at the dearest of its models'), and "
    "refuses a request naming one."
)
_JOB_HELP = (
    "samples: other models answer the prompts of answers imported without "
    "samples; corrections: the improver corrects the blocks the check flagged."
)


class ConsistencyRunSerializer(LLMRunSerializer):
    """A consistency run: other models sampling answers, or the improver
    correcting flagged sentences."""

    class Meta(LLMRunSerializer.Meta):
        model = ConsistencyRun
        fields = run_fields(
            project=("job",), completion_tokens=("usage", "cancel_requested")
        )
        read_only_fields = fields
        extra_kwargs = {
            **LLMRunSerializer.Meta.extra_kwargs,
            "job": {"help_text": _JOB_HELP},
            "model": {
                "help_text": "The reformulator (LLM-made prompt variants) of a "
                "samples run; the improver of a corrections run."
            },
            "params": {
                "help_text": "The job's options and LLM settings it was "
                "started with, defaults filled in."
            },
            "budget": {
                "help_text": "Cap (decimal string); no call is sent that could "
                "take the cost past it."
            },
            "cost_estimate": {
                "help_text": "Estimated cost of doing every answer the job "
                "needs, computed at the start (decimal string)."
            },
            "progress_done": {
                "help_text": "Answers processed: done, or failed (listed in error)."
            },
            "progress_total": {"help_text": "Answers the run set out to do."},
            "usage": {
                "help_text": "Per model: prompt_tokens, completion_tokens, requests."
            },
            "cancel_requested": {
                "help_text": "An admin asked it to stop; it does before its next batch."
            },
            "error": {
                "help_text": "Why it stopped early or failed (first line), then "
                "one line per answer that could not be done or note on one."
            },
        }


class ConsistencyEstimateRequestSerializer(serializers.Serializer):
    project = serializers.IntegerField(help_text="Project id.")
    job = serializers.ChoiceField(
        choices=ConsistencyRun.Job.choices,
        default=ConsistencyRun.Job.SAMPLES,
        help_text=_JOB_HELP,
    )
    params = serializers.DictField(validators=[storable_json], help_text=_PARAMS_HELP)
    budget = serializers.DecimalField(
        max_digits=12,
        decimal_places=6,
        required=False,
        allow_null=True,
        help_text="Optional: with a budget, every model needs a price in the "
        "deployment's LLM_PRICES.",
    )


class ConsistencyRunStartSerializer(ConsistencyEstimateRequestSerializer):
    budget = serializers.DecimalField(
        max_digits=12,
        decimal_places=6,
        help_text="Most the run may spend, more than 0 and at most the "
        "deployment's LLM_RUN_MAX_BUDGET, in its prices' currency.",
    )


class ConsistencyEstimateSerializer(serializers.Serializer):
    project = serializers.IntegerField(help_text="Project id.")
    job = serializers.CharField(help_text=_JOB_HELP)
    models = serializers.ListField(
        child=serializers.CharField(), help_text="Models the run would call."
    )
    documents = serializers.IntegerField(
        help_text="Answers a run would do: for samples, those with a prompt and "
        "no samples; for corrections, those with flagged blocks not corrected."
    )
    calls = serializers.IntegerField(help_text="All calls.")
    calls_by_kind = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="sample_calls and reformulation_calls (LLM-made variants, once "
        "per answer and variant), or summary_calls and correction_calls.",
    )
    prompt_tokens = serializers.IntegerField(
        help_text="Estimated from the prompts' length (about 4 characters a token)."
    )
    completion_tokens = serializers.IntegerField(
        help_text="Estimated: a sample about as long as its answer (1,400 tokens "
        "for the long-answer variant), a correction as long as its block."
    )
    cost = serializers.DecimalField(
        max_digits=12,
        decimal_places=6,
        allow_null=True,
        help_text="Estimated cost at the deployment's prices (decimal string); "
        "null when a model has none.",
    )


class ConsistencyRunViewSet(LLMRunViewSet):
    """LLM calls for a consistency project's answers: other models sampling
    those imported without samples, or the improver correcting flagged blocks."""

    serializer_class = ConsistencyRunSerializer
    start_serializer_class = ConsistencyRunStartSerializer
    estimate_request_serializer_class = ConsistencyEstimateRequestSerializer
    estimate_serializer_class = ConsistencyEstimateSerializer
    project_action = "consistency runs"
    create_description = (
        "Start a run; refused for another kind of project, a model the\n"
        "project does not allow or the deployment has no price for, without an\n"
        "LLM, with a price in params, a setting or budget outside the\n"
        "deployment's bounds, or while the project has a consistency run\n"
        "pending or running."
    )
    estimate_description = (
        "What a run would ask and roughly cost; starts nothing, calls nobody."
    )

    def run_start(self, project, data, user):
        return consistency_runs.consistency_run_start(
            project=project,
            job=data["job"],
            budget=data["budget"],
            params=data["params"],
            created_by=user,
        )

    def run_estimate(self, project, data):
        return consistency_runs.run_estimate(
            project, data["job"], data["params"], budget=data.get("budget")
        )

    def run_cancel(self, run):
        return consistency_runs.consistency_run_cancel(run=run)
