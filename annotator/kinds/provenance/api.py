"""The online provenance check: a RAG service sends one answer with its
question and contexts and gets the check's output in the same response, from
the project's scorer. Nothing is stored. The check runs in the request, so
what one may ask is bounded (the PROVENANCE_CHECK_* settings: body, sentences,
claims, query, seconds, and a rate per user)."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from annotator.api.parsers import LimitedJSONParser
from annotator.kinds.provenance import online
from annotator.models import Project
from annotator.projects import access
from pipeline.checkers.provenance import ProvenanceChecker


class ItemParser(LimitedJSONParser):
    limit_setting = "PROVENANCE_CHECK_MAX_BYTES"
    what = "send one item per request"


class CheckRateThrottle(SimpleRateThrottle):
    """PROVENANCE_CHECK_RATE checks per user: each may hold a web worker for
    PROVENANCE_CHECK_SECONDS. Counted before the body is read."""

    scope = "provenance_check"

    def get_rate(self):
        # Read per request from settings (a parsed (count, seconds) pair),
        # not from DRF's DEFAULT_THROTTLE_RATES, fixed when DRF is imported.
        return settings.PROVENANCE_CHECK_RATE

    def parse_rate(self, rate):
        return rate

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class ContextSerializer(serializers.Serializer):
    id = serializers.CharField(required=False, help_text="Context id (its index).")
    text = serializers.CharField(help_text="The context's text.")


class ItemCheckSerializer(serializers.Serializer):
    """For the schema only: ``item_from_json`` reads the item."""

    project = serializers.IntegerField(
        help_text="Id of the provenance project whose scorer checks the item."
    )
    id = serializers.CharField(help_text="Item id, echoed back.")
    query = serializers.CharField(
        required=False, help_text="The question (empty for a summary)."
    )
    answer = serializers.CharField(help_text="The generated answer to check.")
    contexts = serializers.ListField(
        child=serializers.JSONField(),
        help_text="The retrieved contexts the answer was generated from: "
        'strings or {"id", "text"} objects.',
    )


class SourceSerializer(serializers.Serializer):
    context = serializers.CharField(help_text="Id of the context it is in.")
    start = serializers.IntegerField(help_text="Offset in that context.")
    end = serializers.IntegerField()
    text = serializers.CharField()
    relevance = serializers.FloatField(help_text="Relevance to the claim (softmax).")
    weight = serializers.FloatField(help_text="Its share among the selected sources.")
    nli = serializers.FloatField(
        allow_null=True, help_text="p(supports) of the claim against it alone."
    )


class CheckedItemSerializer(serializers.Serializer):
    """For the schema only: the line ``python -m pipeline provenance`` writes."""

    id = serializers.CharField()
    query = serializers.CharField()
    answer = serializers.CharField()
    contexts = ContextSerializer(many=True)
    claim = serializers.CharField(help_text="The claim the scorer read.")
    score = serializers.FloatField(
        allow_null=True, help_text="p(supported) of the weakest claim; null unscored."
    )
    verdict = serializers.ChoiceField(["supported", "hallucinated", "unscored"])
    sources = SourceSerializer(many=True, help_text="Selected, in document order.")
    deciding = serializers.IntegerField(
        allow_null=True, help_text="Index in sources of the one that decided."
    )
    joined = serializers.FloatField(
        allow_null=True, help_text="p(supported) against the sources read together."
    )
    sentences = serializers.ListField(
        child=serializers.DictField(),
        help_text="Each sentence of a several-sentence answer, checked alone.",
    )
    weakest = serializers.IntegerField(help_text="Index of the deciding sentence.")


def _project(user, raw) -> Project:
    if not isinstance(raw, int) or isinstance(raw, bool):
        raise ValidationError({"project": "must be a project id (a whole number)"})
    try:
        project = access.project_get(user=user, pk=raw)
    except Project.DoesNotExist:
        raise NotFound("no such project") from None
    if not access.machine_scores_visible(user, project):
        raise PermissionDenied(
            f"checking items returns scores: it needs the admin role on project "
            f"{project.name!r}, or the project showing machine scores"
        )

    # Other kinds take items too (a consistency project's responses): only a
    # provenance project checks a RAG answer.
    if project.kind != ProvenanceChecker.kind:
        raise ValidationError(
            {"project": f"project {project.name!r} does not check RAG answers"}
        )
    return project


class ProvenanceCheckView(APIView):
    parser_classes = [ItemParser]
    throttle_classes = [CheckRateThrottle]

    @extend_schema(
        request=ItemCheckSerializer,
        responses={
            200: CheckedItemSerializer,
            400: OpenApiResponse(
                description="A malformed item, the field named, or one over "
                "PROVENANCE_CHECK_MAX_SENTENCES, _MAX_CLAIMS or _MAX_QUERY_CHARS."
            ),
            403: OpenApiResponse(description="Scores of this project are hidden."),
            404: OpenApiResponse(description="No such project visible."),
            413: OpenApiResponse(description="Over PROVENANCE_CHECK_MAX_BYTES."),
            429: OpenApiResponse(description="Over PROVENANCE_CHECK_RATE."),
            503: OpenApiResponse(
                description="The check ran past PROVENANCE_CHECK_SECONDS."
            ),
        },
    )
    def post(self, request):
        """Check one RAG answer against its contexts with the project's
        scorer (its active one, else the deployment's default; with neither
        the sources are selected and the verdict is ``unscored``) and answer
        with the sources selected, each one's weight and NLI score, the one
        that decided and the verdict. Nothing is stored."""
        body = request.data
        if not isinstance(body, dict):
            raise ValidationError("the body must be a JSON object: one item")
        project = _project(request.user, body.get("project"))
        item = {k: v for k, v in body.items() if k != "project"}
        return Response(online.rag_item_check(project=project, raw=item))
