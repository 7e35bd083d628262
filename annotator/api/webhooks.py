"""Webhooks: register, pause, narrow and delete them, and read their delivery
log. A project's admins alone see its webhooks (their URLs and logs); the
secret is in the answer to the registration and nowhere else."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from annotator.api.params import project_param
from annotator.api.parsers import BoundedJSONParser
from annotator.api.permissions import IsProjectAdmin, managed_project
from annotator.models import Webhook, WebhookDelivery
from annotator.projects import webhooks

_EVENTS_HELP = (
    "Run kinds the webhook is called for when one ends: "
    f"{', '.join(webhooks.webhook_events())}; empty (the default) for all."
)


class WebhookSerializer(serializers.ModelSerializer):
    events = serializers.ListField(
        child=serializers.CharField(), required=False, help_text=_EVENTS_HELP
    )

    class Meta:
        model = Webhook
        fields = [
            "id",
            "project",
            "url",
            "events",
            "is_active",
            "created_by",
            "created_at",
        ]
        read_only_fields = ["id", "project", "url", "created_by", "created_at"]
        extra_kwargs = {
            "id": {"help_text": "Webhook id."},
            "project": {"help_text": "Project id."},
            "url": {
                "help_text": "Where the calls go (its host one the deployment "
                "allows, WEBHOOK_ALLOWED_HOSTS); register a new webhook to "
                "change it."
            },
            "is_active": {"help_text": "false pauses the calls (none is queued)."},
            "created_by": {"help_text": "User id who registered it."},
            "created_at": {"help_text": "When it was registered."},
        }


class WebhookCreateSerializer(serializers.Serializer):
    project = serializers.IntegerField(help_text="Project id.")
    url = serializers.CharField(
        max_length=1000,
        trim_whitespace=False,
        help_text="http(s) URL to POST to; its host must be one the deployment "
        "allows (WEBHOOK_ALLOWED_HOSTS). Redirects are not followed.",
    )
    events = serializers.ListField(
        child=serializers.CharField(), required=False, help_text=_EVENTS_HELP
    )


class WebhookCreatedSerializer(WebhookSerializer):
    secret = serializers.CharField(
        read_only=True,
        help_text="Signs every call (X-SafePassage-Signature). Shown in this "
        "answer only: store it now.",
    )

    class Meta(WebhookSerializer.Meta):
        fields = [*WebhookSerializer.Meta.fields, "secret"]


class WebhookDeliverySerializer(serializers.ModelSerializer):
    class Meta:
        model = WebhookDelivery
        fields = [
            "id",
            "webhook",
            "event",
            "payload",
            "status",
            "attempts",
            "response_status",
            "error",
            "created_at",
            "last_attempt_at",
            "delivered_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "id": {"help_text": "Delivery id (the X-SafePassage-Delivery header)."},
            "webhook": {"help_text": "Webhook id."},
            "event": {"help_text": "Run kind that ended (X-SafePassage-Event)."},
            "payload": {"help_text": "The JSON body sent."},
            "status": {
                "help_text": "pending (being sent, or waiting to be retried), "
                "delivered (a 2xx answer) or failed (WEBHOOK_MAX_ATTEMPTS calls "
                "failed, or the URL is no longer allowed)."
            },
            "attempts": {"help_text": "Calls made so far."},
            "response_status": {
                "help_text": "HTTP status of the last answer; null when there "
                "was none (network error, timeout)."
            },
            "error": {"help_text": "What went wrong with the last call."},
            "created_at": {"help_text": "When the run ended and this was queued."},
            "last_attempt_at": {"help_text": "When the last call was made."},
            "delivered_at": {"help_text": "When a call got a 2xx answer."},
        }


@extend_schema_view(
    list=extend_schema(
        parameters=[OpenApiParameter("project", int, description="Project id.")]
    )
)
class WebhookViewSet(
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.ReadOnlyModelViewSet,
):
    """URLs called (signed, retried, logged) when a run of the project ends:
    a check pass, an extraction, grading, consistency or training run. For
    the project's admins."""

    serializer_class = WebhookSerializer
    permission_classes = [IsProjectAdmin]
    parser_classes = [BoundedJSONParser]

    def get_queryset(self):
        queryset = webhooks.webhooks_for(self.request.user)
        project = project_param(self.request.query_params)
        if project is not None:
            queryset = queryset.filter(project_id=project)
        return queryset

    @extend_schema(
        request=WebhookCreateSerializer, responses={201: WebhookCreatedSerializer}
    )
    def create(self, request, *args, **kwargs):
        """Register a URL; the answer holds its secret, shown this once. 400
        when the URL's host is not in WEBHOOK_ALLOWED_HOSTS (or that list is
        empty) or an event is not a run kind."""
        payload = WebhookCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        webhook = webhooks.webhook_create(
            project=managed_project(request.user, data["project"], action="webhooks"),
            url=data["url"],
            events=data.get("events"),
            created_by=request.user,
        )
        return Response(
            WebhookCreatedSerializer(webhook).data, status=status.HTTP_201_CREATED
        )

    def perform_update(self, serializer):
        data = serializer.validated_data
        webhooks.webhook_update(
            webhook=serializer.instance,
            events=data.get("events"),
            is_active=data.get("is_active"),
        )

    @extend_schema(responses={200: WebhookDeliverySerializer(many=True)})
    @action(detail=True, methods=["get"])
    def deliveries(self, request, pk=None):
        """The webhook's delivery log, newest first."""
        queryset = self.get_object().deliveries.order_by("-created_at", "-pk")
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(
            WebhookDeliverySerializer(page, many=True).data
        )
