"""What the consistency kind brings to the app: its runs' endpoints and
their dashboard panel, and its set-up page (answers, samples)."""

from annotator.kinds import DashboardPanels, KindHook
from annotator.kinds.consistency.dashboard import dashboard_panel
from annotator.kinds.consistency.setup import SETUP

HOOK = KindHook(
    kind="consistency",
    api_urls="annotator.kinds.consistency.urls",
    dashboard=DashboardPanels(
        template="dashboard/consistency.html",
        context=dashboard_panel,
        script="js/dashboard/consistency.js",
    ),
    setup=SETUP,
)
