"""What the extraction kind brings to the app: its runs' endpoints."""

from annotator.kinds import KindHook

HOOK = KindHook(kind="extraction", api_urls="annotator.kinds.extraction.urls")
