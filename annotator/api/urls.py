from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.authtoken.views import obtain_auth_token
from rest_framework.routers import DefaultRouter

from . import views

router = DefaultRouter()
router.register("projects", views.ProjectViewSet, basename="project")
router.register("documents", views.DocumentViewSet, basename="document")
router.register("predictions", views.PredictionViewSet, basename="prediction")
router.register("annotations", views.AnnotationViewSet, basename="annotation")
router.register(
    "extraction-runs", views.ExtractionRunViewSet, basename="extraction-run"
)
router.register("scorer-models", views.ScorerModelViewSet, basename="scorer-model")
router.register("training-runs", views.TrainingRunViewSet, basename="training-run")

urlpatterns = [
    path("", include(router.urls)),
    path("auth/token/", obtain_auth_token, name="api-token"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path(
        "docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"
    ),
]
