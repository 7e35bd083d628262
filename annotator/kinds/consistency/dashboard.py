"""The consistency kind's dashboard panel: its recent runs, and what the
panel's script needs to start and follow one."""

from typing import Any

from annotator.kinds.consistency.models import ConsistencyRun
from annotator.models import ACTIVE_RUN_STATUSES, Project


def dashboard_panel(project: Project, *, limit: int = 8) -> dict[str, Any]:
    # One run is pending or running at a time (the services refuse a
    # second), and it is the newest.
    runs = list(ConsistencyRun.objects.filter(project=project)[:limit])
    live = next((r for r in runs if r.status in ACTIVE_RUN_STATUSES), None)
    return {
        "runs": runs,
        "data": {
            "live_run": live.pk if live else None,
            "urls": {
                "estimate": "/api/consistency-runs/estimate/",
                "runs": "/api/consistency-runs/",
                "run": "/api/consistency-runs/{id}/",
                "cancel": "/api/consistency-runs/{id}/cancel/",
            },
        },
    }
