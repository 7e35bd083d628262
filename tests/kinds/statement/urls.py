"""The statement kind's endpoints, under /api/."""

from rest_framework.routers import SimpleRouter

from tests.kinds.statement.api import StatementRunViewSet

router = SimpleRouter()
router.register("statement-runs", StatementRunViewSet, basename="statement-run")
urlpatterns = router.urls
