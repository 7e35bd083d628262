"""Consistency runs (sampling other models, correcting flagged blocks): the
estimate, start, follow and cancel.

Members of a project follow its runs; only admins estimate, start and cancel
them (they cost money).
"""

from __future__ import annotations

from dataclasses import asdict

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from annotator import consistency_runs, selectors
from annotator.models import ConsistencyRun

from .params import project_param
from .parsers import BoundedJSONParser
from .permissions import ProjectAdminWrites, managed_project
from .serializers import storable_json

_ACTION = "consistency runs"
_PARAMS_HELP = (
    "For job samples: samplers (a non-empty list of the project's llm_models), "
    "and optionally reformulator (the model writing the LLM-made prompt "
    "variants; the first sampler by default), samples per answer (10), seed "
    "(0), variants (all of identity, cot, long_answer, rephrase, expand_before, "
    "expand_after, break_down). For job corrections: improver (a model of the "
    "project), and optionally summaries (true: summarize each block's errors "
    "first) and summarizer (the improver by default). For both: "
    "price_per_mtok_prompt and price_per_mtok_completion (price per million "
    "tokens, in the budget's currency, the same for every model of the "
    "project's endpoint; 0 for a free local model); LLM settings temperature, "
    "max_tokens, max_concurrency, timeout, max_retries."
)
_JOB_HELP = (
    "samples: other models answer the prompts of answers imported without "
    "samples; corrections: the improver corrects the blocks the check flagged."
)


class ConsistencyRunSerializer(serializers.ModelSerializer):
    class Meta:
        model = ConsistencyRun
        fields = [
            "id",
            "project",
            "job",
            "model",
            "params",
            "status",
            "budget",
            "cost_estimate",
            "cost",
            "progress_done",
            "progress_total",
            "prompt_tokens",
            "completion_tokens",
            "usage",
            "cancel_requested",
            "error",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "id": {"help_text": "Run id."},
            "project": {"help_text": "Project id."},
            "job": {"help_text": _JOB_HELP},
            "model": {
                "help_text": "The reformulator (LLM-made prompt variants) of a "
                "samples run; the improver of a corrections run."
            },
            "params": {
                "help_text": "The job's options, prices and LLM settings it was "
                "started with, defaults filled in."
            },
            "status": {
                "help_text": "pending, running, succeeded (also when stopped "
                "before the budget), failed or cancelled."
            },
            "budget": {
                "help_text": "Cap (decimal string); no call is sent that could "
                "take the cost past it."
            },
            "cost_estimate": {
                "help_text": "Estimated cost of doing every answer the job "
                "needs, computed at the start (decimal string)."
            },
            "cost": {
                "help_text": "Cost so far from the real token usage (decimal string)."
            },
            "progress_done": {
                "help_text": "Answers processed: done, or failed (listed in error)."
            },
            "progress_total": {"help_text": "Answers the run set out to do."},
            "prompt_tokens": {"help_text": "Prompt tokens used so far."},
            "completion_tokens": {"help_text": "Completion tokens used so far."},
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
            "created_by": {"help_text": "User id who started it."},
            "created_at": {"help_text": "When it was requested."},
            "started_at": {"help_text": "When a worker picked it up."},
            "finished_at": {"help_text": "When it ended."},
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
        help_text="Optional: with a budget the prices are required.",
    )


class ConsistencyRunStartSerializer(ConsistencyEstimateRequestSerializer):
    budget = serializers.DecimalField(
        max_digits=12,
        decimal_places=6,
        help_text="Most the run may spend, more than 0, in the prices' currency.",
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
        help_text="Estimated cost (decimal string); null without prices in params.",
    )


@extend_schema_view(
    list=extend_schema(
        parameters=[OpenApiParameter("project", int, description="Project id.")]
    )
)
class ConsistencyRunViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """LLM calls for a consistency project's answers: other models sampling
    those imported without samples, or the improver correcting flagged blocks."""

    serializer_class = ConsistencyRunSerializer
    permission_classes = [ProjectAdminWrites]
    parser_classes = [BoundedJSONParser]

    def get_queryset(self):
        queryset = selectors.consistency_runs_for(self.request.user)
        project = project_param(self.request.query_params)
        if project is not None:
            queryset = queryset.filter(project_id=project)
        return queryset

    @extend_schema(
        request=ConsistencyRunStartSerializer, responses={201: ConsistencyRunSerializer}
    )
    def create(self, request, *args, **kwargs):
        """Start a run; refused for another kind of project, a model the
        project does not allow, without an LLM, prices or a positive budget,
        or while the project has a consistency run pending or running."""
        payload = ConsistencyRunStartSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        run = consistency_runs.consistency_run_start(
            project=managed_project(request.user, data["project"], action=_ACTION),
            job=data["job"],
            budget=data["budget"],
            params=data["params"],
            created_by=request.user,
        )
        return Response(
            ConsistencyRunSerializer(run).data, status=status.HTTP_201_CREATED
        )

    @extend_schema(
        request=ConsistencyEstimateRequestSerializer,
        responses={200: ConsistencyEstimateSerializer},
    )
    @action(detail=False, methods=["post"])
    def estimate(self, request):
        """What a run would ask and roughly cost; starts nothing, calls nobody."""
        payload = ConsistencyEstimateRequestSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        project = managed_project(request.user, data["project"], action=_ACTION)
        estimate = consistency_runs.run_estimate(
            project, data["job"], data["params"], budget=data.get("budget")
        )
        return Response(
            ConsistencyEstimateSerializer(
                {"project": project.pk, **asdict(estimate)}
            ).data
        )

    @extend_schema(request=None, responses={200: ConsistencyRunSerializer})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        """Stop the run before its next batch (at once if no worker has it)."""
        run = consistency_runs.consistency_run_cancel(run=self.get_object())
        return Response(ConsistencyRunSerializer(run).data)
