from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from annotator.api import adjudications, grading, guidelines, tokens, views, webhooks
from annotator.kinds import kind_hooks

router = DefaultRouter()
router.register("projects", views.ProjectViewSet, basename="project")
router.register("documents", views.DocumentViewSet, basename="document")
router.register("claims", views.ClaimViewSet, basename="claim")
# The claims' address in an earlier release, kept for one more (not in the schema).
router.register("predictions", views.OldClaimViewSet, basename="old-claim")
router.register("labels", views.LabelViewSet, basename="label")
# The labels' address in an earlier release, kept for one more (not in the schema).
router.register("annotations", views.OldLabelViewSet, basename="old-label")
router.register("scorer-models", views.ScorerModelViewSet, basename="scorer-model")
router.register("training-runs", views.TrainingRunViewSet, basename="training-run")
router.register("grading-runs", grading.GradingRunViewSet, basename="grading-run")
router.register("webhooks", webhooks.WebhookViewSet, basename="webhook")

labeling = [
    path("queue/next/", views.QueueNextView.as_view(), name="queue-next"),
    path(
        "items/<int:claim_pk>/",
        views.LabelingItemView.as_view(),
        name="labeling-item",
    ),
    path("labels/", views.LabelsView.as_view(), name="labels"),
    path("labels/mine/", views.MyLabelsView.as_view(), name="labels-mine"),
    path("labels/<uuid:client_id>/", views.LabelUndoView.as_view(), name="label-undo"),
    path("progress/", views.ProgressView.as_view(), name="progress"),
    path("guideline/", guidelines.GuidelineView.as_view(), name="api-guideline"),
    path(
        "adjudications/",
        adjudications.AdjudicationView.as_view(),
        name="api-adjudications",
    ),
]

urlpatterns = [
    path("projects/<int:pk>/", include(labeling)),
    path("", include(router.urls)),
    path("auth/token/", tokens.TokenView.as_view(), name="api-token"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema"),
        name="api-docs",
    ),
    # Each kind's own endpoints.
    *(
        path("", include(hook.api_urls))
        for hook in kind_hooks().values()
        if hook.api_urls
    ),
]
