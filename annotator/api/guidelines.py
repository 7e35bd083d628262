"""A project's labeling guideline: read the latest version (or an older one),
and, for the project's admins, save a new version.

Members read it; the HTML comes from ``annotator.labeling.guidelines``, the one place
guideline Markdown becomes HTML (raw HTML shown as text, only http, https and
mailto links).
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.api.params import id_param
from annotator.api.parsers import BoundedJSONParser
from annotator.api.permissions import require_role
from annotator.api.serializers import TextField
from annotator.labeling import guidelines
from annotator.projects import access


class GuidelineSectionSerializer(serializers.Serializer):
    heading = serializers.CharField(help_text="The heading's text, as read.")
    key = serializers.CharField(
        help_text="The heading in lower case, runs of spaces as one: a section "
        "belongs to the entity type or claim kind whose name or display name "
        "reads the same."
    )
    level = serializers.IntegerField(help_text="1 for #, 2 for ##, ...")
    html = serializers.CharField(
        help_text="What follows the heading, up to the next heading of the same "
        "or a higher level, as HTML."
    )


class GuidelineSerializer(serializers.Serializer):
    version = serializers.IntegerField(help_text="1 for the first, then 2, ...")
    text = serializers.CharField(help_text="The guideline, in Markdown.")
    html = serializers.CharField(
        help_text="The guideline rendered: raw HTML shown as text, only http, "
        "https and mailto links."
    )
    sections = GuidelineSectionSerializer(
        many=True, help_text="One per heading, in order."
    )
    created_by = serializers.CharField(
        allow_null=True, help_text="Who saved this version."
    )
    created_at = serializers.DateTimeField(help_text="When it was saved.")
    versions = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="Every version of the project's guideline, newest first.",
    )


class GuidelineInSerializer(serializers.Serializer):
    text = TextField(
        trim_whitespace=False,
        help_text="The guideline in Markdown, at most "
        f"{guidelines.GUIDELINE_MAX_CHARS:,} characters, no NUL. A heading "
        "naming an entity type or claim kind (its name or display name, any "
        "case) starts the section shown beside its items on the labeling page.",
    )


class GuidelineView(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [BoundedJSONParser]

    def _body(self, project, guideline) -> dict:
        data = guidelines.guideline_data(guideline)
        assert data is not None  # both callers pass a version, never None
        return {
            **data,
            "versions": list(
                project.guidelines.order_by("-version").values_list(
                    "version", flat=True
                )
            ),
        }

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "version", int, description="An older version; the latest if absent."
            )
        ],
        responses={200: GuidelineSerializer},
    )
    def get(self, request, pk):
        """The project's guideline: its latest version, or the one asked for.
        A 404 while the project has none."""
        project = access.project_get(user=request.user, pk=pk)
        version = id_param(request.query_params, "version", what="a version number")
        guideline = (
            guidelines.guideline_latest(project)
            if version is None
            else guidelines.guideline_get(project, version)
        )
        if guideline is None:
            raise NotFound(
                "the project has no guideline yet"
                if version is None
                else f"the project has no guideline version {version}"
            )
        return Response(self._body(project, guideline))

    @extend_schema(
        request=GuidelineInSerializer,
        responses={201: GuidelineSerializer, 200: GuidelineSerializer},
    )
    def post(self, request, pk):
        """Save a new version of the guideline (project admins). Text identical
        to the latest version's makes no new version: 200 with that version
        instead of 201."""
        project = access.project_get(user=request.user, pk=pk)
        # The role first: a member who may not save learns nothing more.
        require_role(
            request.user, project, access.MANAGE, action="editing the guideline"
        )
        payload = GuidelineInSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        guideline, created = guidelines.guideline_save(
            project=project, user=request.user, text=payload.validated_data["text"]
        )
        return Response(
            self._body(project, guideline),
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )
