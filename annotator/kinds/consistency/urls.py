"""The consistency kind's endpoints, under /api/."""

from rest_framework.routers import SimpleRouter

from annotator.kinds.consistency.api import ConsistencyRunViewSet

router = SimpleRouter()
router.register("consistency-runs", ConsistencyRunViewSet, basename="consistency-run")
urlpatterns = router.urls
