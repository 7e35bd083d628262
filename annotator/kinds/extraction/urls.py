"""The extraction kind's endpoints, under /api/."""

from rest_framework.routers import SimpleRouter

from annotator.kinds.extraction.api import ExtractionRunViewSet

router = SimpleRouter()
router.register("extraction-runs", ExtractionRunViewSet, basename="extraction-run")
urlpatterns = router.urls
