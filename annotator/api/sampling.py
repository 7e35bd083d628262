"""Consistency sampling runs: the estimate, start, follow and cancel.

Members of a project follow its runs; only admins estimate, start and cancel
them (they cost money).
"""

from __future__ import annotations

from dataclasses import asdict

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from annotator import sampling, selectors
from annotator.models import SamplingRun

from .params import project_param
from .parsers import BoundedJSONParser
from .permissions import ProjectAdminWrites, managed_project
from .serializers import storable_json

_ACTION = "consistency sampling"
_PARAMS_HELP = (
    "samplers (a non-empty list of the project's llm_models), and optionally "
    "reformulator (the model writing the LLM-made prompt variants; the first "
    "sampler by default), samples per answer (10), seed (0), variants (all of "
    "identity, cot, long_answer, rephrase, expand_before, expand_after, "
    "break_down); price_per_mtok_prompt and price_per_mtok_completion (price "
    "per million tokens, in the budget's currency, the same for every model of "
    "the project's endpoint; 0 for a free local model); LLM settings "
    "temperature, max_tokens, max_concurrency, timeout, max_retries."
)


class SamplingRunSerializer(serializers.ModelSerializer):
    class Meta:
        model = SamplingRun
        fields = [
            "id",
            "project",
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
            "model": {"help_text": "The reformulator (LLM-made prompt variants)."},
            "params": {
                "help_text": "Samplers, samples, seed, variants, prices and LLM "
                "settings it was started with, defaults filled in."
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
                "help_text": "Estimated cost of sampling every answer without "
                "samples, computed at the start (decimal string)."
            },
            "cost": {
                "help_text": "Cost so far from the real token usage (decimal string)."
            },
            "progress_done": {
                "help_text": "Answers processed: sampled, or failed (listed in error)."
            },
            "progress_total": {"help_text": "Answers the run set out to sample."},
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
                "one line per answer that could not be sampled."
            },
            "created_by": {"help_text": "User id who started it."},
            "created_at": {"help_text": "When it was requested."},
            "started_at": {"help_text": "When a worker picked it up."},
            "finished_at": {"help_text": "When it ended."},
        }


class SamplingEstimateRequestSerializer(serializers.Serializer):
    project = serializers.IntegerField(help_text="Project id.")
    params = serializers.DictField(validators=[storable_json], help_text=_PARAMS_HELP)
    budget = serializers.DecimalField(
        max_digits=12,
        decimal_places=6,
        required=False,
        allow_null=True,
        help_text="Optional: with a budget the prices are required.",
    )


class SamplingRunStartSerializer(SamplingEstimateRequestSerializer):
    budget = serializers.DecimalField(
        max_digits=12,
        decimal_places=6,
        help_text="Most the run may spend, more than 0, in the prices' currency.",
    )


class SamplingEstimateSerializer(serializers.Serializer):
    project = serializers.IntegerField(help_text="Project id.")
    samplers = serializers.ListField(
        child=serializers.CharField(), help_text="Models answering the prompts."
    )
    reformulator = serializers.CharField(
        help_text="Model writing the LLM-made prompt variants."
    )
    documents = serializers.IntegerField(
        help_text="Answers a run would sample: with a prompt and no samples."
    )
    sample_calls = serializers.IntegerField(help_text="Samples asked for.")
    reformulation_calls = serializers.IntegerField(
        help_text="Calls writing LLM-made variants (once per answer and variant)."
    )
    calls = serializers.IntegerField(help_text="All calls: samples and variants.")
    prompt_tokens = serializers.IntegerField(
        help_text="Estimated from the prompts' length (about 4 characters a token)."
    )
    completion_tokens = serializers.IntegerField(
        help_text="Estimated from the length of the answer each sample answers "
        "alongside (1,400 tokens for the long-answer variant)."
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
class SamplingRunViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Other models answering a consistency project's prompts, for the
    answers imported without samples."""

    serializer_class = SamplingRunSerializer
    permission_classes = [ProjectAdminWrites]
    parser_classes = [BoundedJSONParser]

    def get_queryset(self):
        queryset = selectors.sampling_runs_for(self.request.user)
        project = project_param(self.request.query_params)
        if project is not None:
            queryset = queryset.filter(project_id=project)
        return queryset

    @extend_schema(
        request=SamplingRunStartSerializer, responses={201: SamplingRunSerializer}
    )
    def create(self, request, *args, **kwargs):
        """Start sampling; refused for another kind of project, a model the
        project does not allow, without an LLM, prices or a positive budget,
        or while the project has a sampling run pending or running."""
        payload = SamplingRunStartSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        run = sampling.sampling_run_start(
            project=managed_project(request.user, data["project"], action=_ACTION),
            budget=data["budget"],
            params=data["params"],
            created_by=request.user,
        )
        return Response(SamplingRunSerializer(run).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=SamplingEstimateRequestSerializer,
        responses={200: SamplingEstimateSerializer},
    )
    @action(detail=False, methods=["post"])
    def estimate(self, request):
        """What a run would ask and roughly cost; starts nothing, calls nobody."""
        payload = SamplingEstimateRequestSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        project = managed_project(request.user, data["project"], action=_ACTION)
        estimate = sampling.sampling_estimate(
            project, data["params"], budget=data.get("budget")
        )
        return Response(
            SamplingEstimateSerializer({"project": project.pk, **asdict(estimate)}).data
        )

    @extend_schema(request=None, responses={200: SamplingRunSerializer})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        """Stop the run before its next batch (at once if no worker has it)."""
        run = sampling.sampling_run_cancel(run=self.get_object())
        return Response(SamplingRunSerializer(run).data)
