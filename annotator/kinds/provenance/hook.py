"""What the provenance kind brings to the app: how its checker ranks the
context's sentences (PROVENANCE_RELEVANCE), its online check, and its set-up
page (RAG answers)."""

from django.conf import settings

from annotator.kinds import KindHook, SetupPage

HOOK = KindHook(
    kind="provenance",
    checker_options={"relevance": lambda _project: settings.PROVENANCE_RELEVANCE},
    api_urls="annotator.kinds.provenance.urls",
    setup=SetupPage(template="setup/provenance.html"),
)
