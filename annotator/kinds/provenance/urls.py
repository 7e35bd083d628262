"""The provenance kind's endpoint, under /api/: the online check."""

from django.urls import path

from annotator.kinds.provenance.api import ProvenanceCheckView

urlpatterns = [
    path(
        "provenance/check/",
        ProvenanceCheckView.as_view(),
        name="provenance-check",
    ),
]
