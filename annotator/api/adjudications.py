"""The adjudication queue over REST: the items a project's experts disagreed
on, with every label, and a reviewer's decision on one. Reviewers and
admins of the project only."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.api.parsers import BoundedJSONParser
from annotator.api.permissions import require_role
from annotator.api.serializers import OldFieldNames, TextField
from annotator.labeling import adjudication
from annotator.labeling.labels import LABEL_NOTE_MAX_CHARS
from annotator.models import Adjudication, Claim, Project
from annotator.projects import access

_ACTION = "adjudicating"


class ExpertLabelSerializer(serializers.Serializer):
    expert = serializers.CharField(help_text="Username.")
    label = serializers.CharField(help_text="safe or unsafe.")
    note = serializers.CharField(help_text="The expert's note.")
    seconds_spent = serializers.FloatField(
        allow_null=True, help_text="Time on screen before the decision."
    )
    guideline_version = serializers.IntegerField(
        allow_null=True, help_text="Guideline version it was made under."
    )
    at = serializers.DateTimeField(help_text="Last changed.")


class DecisionSerializer(serializers.Serializer):
    label = serializers.CharField(help_text="safe or unsafe.")
    reviewer = serializers.CharField(allow_null=True, help_text="Username.")
    note = serializers.CharField(help_text="The reviewer's note.")
    at = serializers.DateTimeField(help_text="When decided (last changed).")


class AdjudicationItemSerializer(serializers.Serializer):
    claim = serializers.IntegerField(help_text="Claim id.")
    document = serializers.CharField(help_text="Document external id.")
    group = serializers.CharField(
        help_text="The claim's group (an extracted field's entity type); empty "
        "where its kind has none."
    )
    hypothesis = serializers.CharField(help_text="The claim as the experts read it.")
    evidence = serializers.CharField(help_text="The evidence it was read against.")
    labels = ExpertLabelSerializer(many=True, help_text="Every expert label.")
    decision = DecisionSerializer(
        allow_null=True, help_text="The reviewer's decision; null while open."
    )


class AdjudicateInSerializer(OldFieldNames, serializers.Serializer):
    """A reviewer's decision on a claim the experts disagree on."""

    claim = serializers.IntegerField(help_text="Claim id.")
    label = serializers.ChoiceField(
        choices=Adjudication.Label.choices, help_text="The decision."
    )
    note = TextField(
        required=False,
        allow_blank=True,
        max_length=LABEL_NOTE_MAX_CHARS,
        help_text="Why, for the experts.",
    )


def _item(item) -> dict:
    p, decision = item["claim"], item["adjudication"]
    return {
        "claim": p.pk,
        "document": p.document.external_id,
        "group": p.group,
        "hypothesis": item["statement"],
        "evidence": p.premise,
        "labels": item["labels"],
        "decision": None
        if decision is None
        else {
            "label": decision.label,
            "reviewer": decision.reviewer.get_username() if decision.reviewer else None,
            "note": decision.note,
            "at": decision.updated_at,
        },
    }


class AdjudicationView(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [BoundedJSONParser]

    def _project(self, request, pk: int) -> Project:
        try:
            project = access.project_get(user=request.user, pk=pk)
        except Project.DoesNotExist:
            raise NotFound("no such project") from None
        require_role(request.user, project, adjudication.REVIEW, action=_ACTION)
        return project

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "open", bool, description="Only the items not decided yet."
            )
        ],
        responses={200: AdjudicationItemSerializer(many=True)},
    )
    def get(self, request, pk: int):
        """The items the project's experts disagree on that the caller may
        decide (none they labelled), open ones first."""
        project = self._project(request, pk)
        open_only = request.query_params.get("open") in ("1", "true")
        items = adjudication.adjudication_items(
            project, open_only=open_only, reviewer=request.user
        )
        return Response(AdjudicationItemSerializer(map(_item, items), many=True).data)

    @extend_schema(
        request=AdjudicateInSerializer, responses={201: AdjudicationItemSerializer}
    )
    def post(self, request, pk: int):
        """Decide an item (again: a second decision replaces the first); its
        decision is its training and gold label from then on."""
        project = self._project(request, pk)
        payload = AdjudicateInSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        claim = Claim.objects.filter(project=project, pk=data["claim"]).first()
        if claim is None:
            raise NotFound("no such claim in this project")
        adjudication.adjudicate(
            claim=claim,
            reviewer=request.user,
            label=data["label"],
            note=data.get("note", ""),
        )
        item = next(
            i
            for i in adjudication.adjudication_items(project)
            if i["claim"].pk == claim.pk
        )
        return Response(
            AdjudicationItemSerializer(_item(item)).data, status=status.HTTP_201_CREATED
        )
