"""The extraction kind's endpoint: its runs, started by project admins and
followed by members."""

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from annotator.api.llm_runs import LLMRunSerializer, run_fields
from annotator.api.params import project_param
from annotator.api.parsers import BoundedJSONParser
from annotator.api.permissions import ProjectAdminWrites, managed_project
from annotator.api.serializers import storable_json
from annotator.kinds.extraction import extraction_runs
from annotator.kinds.extraction.models import ExtractionRun
from annotator.projects import access


class ExtractionRunSerializer(LLMRunSerializer):
    """An extraction run: the LLM extracting fields from a project's
    documents."""

    failed_documents = serializers.SerializerMethodField(
        help_text="Documents the LLM could not handle, with the error."
    )

    class Meta(LLMRunSerializer.Meta):
        model = ExtractionRun
        fields = run_fields(error=("failed_documents",))
        read_only_fields = fields
        extra_kwargs = {
            **LLMRunSerializer.Meta.extra_kwargs,
            "status": {"help_text": "pending, running, succeeded or failed."},
            "progress_done": {"help_text": "Documents processed."},
            "progress_total": {"help_text": "Documents in the run."},
            "budget": {
                "help_text": "Cap (decimal string); the run stops before the "
                "next document would take its cost past it."
            },
        }

    def get_failed_documents(self, run) -> list[dict]:
        return [
            {"document": external_id, "error": error}
            for external_id, error in run.items.filter(status="failed").values_list(
                "document__external_id", "error"
            )[:100]
        ]


class ExtractionRunStartSerializer(serializers.Serializer):
    project = serializers.IntegerField(help_text="Project id.")
    model = serializers.CharField(help_text="LLM model name (one of the project's).")
    params = serializers.DictField(
        required=False,
        default=dict,
        validators=[storable_json],
        help_text="Optional LLM settings within the deployment's bounds: "
        "temperature, top_p, json_mode, timeout, max_retries, max_tokens, n, seed. "
        "No prices: the deployment sets them (LLM_PRICES).",
    )
    budget = serializers.DecimalField(
        max_digits=12,
        decimal_places=6,
        required=False,
        allow_null=True,
        default=None,
        help_text="Most the run may spend, more than 0 and at most the "
        "deployment's LLM_RUN_MAX_BUDGET; its EXTRACTION_DEFAULT_BUDGET when "
        "omitted.",
    )
    documents = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        allow_null=True,
        default=None,
        help_text="Document ids to extract; all of the project's when omitted.",
    )


class ExtractionRunViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Members follow runs; only admins start them (they cost money)."""

    serializer_class = ExtractionRunSerializer
    permission_classes = [ProjectAdminWrites]
    parser_classes = [BoundedJSONParser]

    def get_queryset(self):
        queryset = access.runs_for(self.request.user, ExtractionRun)
        project = project_param(self.request.query_params)
        if project is not None:
            queryset = queryset.filter(project_id=project)
        return queryset

    @extend_schema(
        request=ExtractionRunStartSerializer,
        responses={201: ExtractionRunSerializer},
    )
    def create(self, request, *args, **kwargs):
        payload = ExtractionRunStartSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        project = managed_project(
            request.user, data["project"], action="starting an extraction"
        )
        run = extraction_runs.extraction_run_start(
            project=project,
            model=data["model"],
            params=data["params"],
            budget=data["budget"],
            document_ids=data["documents"],
            created_by=request.user,
        )
        return Response(
            ExtractionRunSerializer(run).data, status=status.HTTP_201_CREATED
        )

    @extend_schema(request=None, responses={200: ExtractionRunSerializer})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        """Stop the run before its next document (at once if no worker has
        started it); the documents left can go in a later run."""
        run = extraction_runs.extraction_run_cancel(run=self.get_object())
        return Response(ExtractionRunSerializer(run).data)
