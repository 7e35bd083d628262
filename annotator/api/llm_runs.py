"""The endpoints every budgeted LLM run shares (grading, consistency): list
and follow a project's runs, estimate one, start it and cancel it.

Members of a project follow its runs; only admins estimate, start and cancel
them (they cost money). A concrete viewset names its serializers, its
descriptions and the services it calls; the rest is here.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from annotator.api.params import project_param
from annotator.api.parsers import BoundedJSONParser
from annotator.api.permissions import ProjectAdminWrites, managed_project
from annotator.models import Project
from annotator.projects import access


class LLMRunSerializer(serializers.ModelSerializer):
    """A run as every kind of LLM run shows it. A kind's serializer names its
    model in ``Meta(LLMRunSerializer.Meta)``, adds its fields with
    ``run_fields`` and says what its own fields and counts mean in
    ``extra_kwargs`` over ``LLMRunSerializer.Meta.extra_kwargs``."""

    class Meta:
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
            "model": {"help_text": "LLM model name."},
            "params": {"help_text": "LLM settings it was started with."},
            "status": {
                "help_text": "pending, running, succeeded (also when stopped "
                "before the budget), failed or cancelled."
            },
            "budget": {
                "help_text": "Cap (decimal string); the run stops before its "
                "next call could take its cost past it."
            },
            "cost_estimate": {
                "help_text": "Estimated cost of the whole run at the deployment's "
                "prices, computed at the start (decimal string)."
            },
            "cost": {
                "help_text": "Cost so far from the real token usage (decimal string)."
            },
            "prompt_tokens": {"help_text": "Prompt tokens used so far."},
            "completion_tokens": {"help_text": "Completion tokens used so far."},
            "error": {"help_text": "Why it stopped early or failed."},
            "created_by": {"help_text": "User id who started it."},
            "created_at": {"help_text": "When it was requested."},
            "started_at": {"help_text": "When a worker picked it up."},
            "finished_at": {"help_text": "When it ended."},
        }


def run_fields(**after: tuple[str, ...]) -> list[str]:
    """Every LLM run's fields with a kind's own ones after those they name:
    ``run_fields(model=("job",))``."""
    fields = []
    for name in LLMRunSerializer.Meta.fields:
        fields += [name, *after.get(name, ())]
    return fields


class LLMRunViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """A kind of LLM run; ``serializer_class`` shows a run."""

    permission_classes = [ProjectAdminWrites]
    parser_classes = [BoundedJSONParser]

    #: The request body of create.
    start_serializer_class: type[serializers.Serializer]
    #: The request body of estimate, and its answer.
    estimate_request_serializer_class: type[serializers.Serializer]
    estimate_serializer_class: type[serializers.Serializer]
    #: What a user who may not manage the project is refused ("LLM grading").
    project_action: str
    #: What create and estimate do, for the schema (and estimate's for the
    #: browsable API, which shows an action's docstring).
    create_description: str
    estimate_description: str

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # The shared actions documented with this kind's serializers: the
        # decorator gives the subclass its own copy of each method first.
        extend_schema_view(
            list=extend_schema(
                parameters=[OpenApiParameter("project", int, description="Project id.")]
            ),
            create=extend_schema(
                request=cls.start_serializer_class,
                responses={201: cls.serializer_class},
                description=cls.create_description,
            ),
            estimate=extend_schema(
                request=cls.estimate_request_serializer_class,
                responses={200: cls.estimate_serializer_class},
                description=cls.estimate_description,
            ),
            cancel=extend_schema(request=None, responses={200: cls.serializer_class}),
        )(cls)
        cls.estimate.kwargs["description"] = cls.estimate_description

    # --- what a concrete viewset does ----------------------------------------

    def run_start(self, project: Project, data: dict[str, Any], user) -> Any:
        """The run started from the start request's validated ``data``."""
        raise NotImplementedError

    def run_estimate(self, project: Project, data: dict[str, Any]) -> Any:
        """The estimate (a dataclass) for the estimate request's ``data``."""
        raise NotImplementedError

    def run_cancel(self, run) -> Any:
        """``run`` as it is after being asked to stop."""
        raise NotImplementedError

    # --- the endpoints -------------------------------------------------------

    def get_queryset(self):
        queryset = access.runs_for(self.request.user, self.serializer_class.Meta.model)
        project = project_param(self.request.query_params)
        if project is not None:
            queryset = queryset.filter(project_id=project)
        return queryset

    def _request(self, serializer_class, request) -> tuple[Project, dict[str, Any]]:
        """The request body validated, and the project it names (one the
        user manages)."""
        payload = serializer_class(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        project = managed_project(
            request.user, data["project"], action=self.project_action
        )
        return project, data

    def create(self, request, *args, **kwargs):
        project, data = self._request(self.start_serializer_class, request)
        run = self.run_start(project, data, request.user)
        return Response(self.serializer_class(run).data, status=status.HTTP_201_CREATED)

    @action(detail=False, methods=["post"])
    def estimate(self, request):
        project, data = self._request(self.estimate_request_serializer_class, request)
        estimate = self.run_estimate(project, data)
        return Response(
            self.estimate_serializer_class(
                {"project": project.pk, **asdict(estimate)}
            ).data
        )

    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        """Stop the run before its next batch (at once if no worker has it)."""
        run = self.run_cancel(self.get_object())
        return Response(self.serializer_class(run).data)
