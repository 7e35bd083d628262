"""What the extraction kind brings to the app: its projects' settings (schema,
prompt, alignment threshold), which its checker is built with, how its claims
read on the labeling page, its runs' endpoints and its set-up page."""

from annotator.kinds import KindHook, SetupPage
from annotator.kinds.extraction.labeling import claim_display, labeling_page
from annotator.kinds.extraction.options import OPTIONS, project_schema

HOOK = KindHook(
    kind="extraction",
    checker_options={
        "schema": project_schema,
        "align_threshold": lambda project: project.option("align_threshold"),
    },
    project_options=OPTIONS,
    evidence_threshold="align_threshold",
    claim_display=claim_display,
    labeling_page=labeling_page,
    api_urls="annotator.kinds.extraction.urls",
    setup=SetupPage(template="setup/extraction.html"),
)
