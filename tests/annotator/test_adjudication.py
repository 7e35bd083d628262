"""Adjudication: the items experts disagree on wait for a reviewer, whose
decision becomes the training and gold label while the experts' labels (and
so the disagreement) stay; agreement is measured per type and per pair of
experts, with Krippendorff's alpha beside Cohen's kappa."""

import pytest
from django.contrib.auth import get_user_model

from annotator.core.errors import ApplicationError
from annotator.labeling import adjudication, gold, labels
from annotator.models import Adjudication, Role
from annotator.projects import services
from annotator.training.data import expert_labels
from tests.annotator.factories import make_claim, make_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def split(personas):
    """Three claims: two experts disagree on ``a`` (an amount) and agree
    on ``b`` (a date); ``c`` has one label. A reviewer is on the project."""
    project = personas.project
    document = make_document(project, external_id="doc")
    rows = {
        name: make_claim(document, external_id=name, type=type_)
        for name, type_ in (("a", "amount"), ("b", "date"), ("c", "date"))
    }
    ann1, ann2 = personas.annotator, personas.annotator2
    for claim, first, second in (
        (rows["a"], "safe", "unsafe"),
        (rows["b"], "unsafe", "unsafe"),
    ):
        labels.label_submit(claim=claim, annotator=ann1, label=first, note="looks fine")
        labels.label_submit(
            claim=claim, annotator=ann2, label=second, seconds_spent=12.5
        )
    labels.label_submit(claim=rows["c"], annotator=ann1, label="safe")
    reviewer = get_user_model().objects.create_user("rev", password="rev-pass")
    services.membership_set(project=project, user=reviewer, role=Role.REVIEWER)
    return project, rows, reviewer


def _side(project, claim) -> bool:
    return gold.is_gold_document(project, claim.document_id)


def test_only_disagreements_wait_with_every_label_note_and_time(split):
    project, rows, _ = split
    assert list(adjudication.disagreements(project)) == [rows["a"]]
    [item] = adjudication.adjudication_items(project)
    assert item["adjudication"] is None
    assert [(x["expert"], x["label"]) for x in item["labels"]] == [
        ("ann1", "safe"),
        ("ann2", "unsafe"),
    ]
    assert item["labels"][0]["note"] == "looks fine"
    assert item["labels"][1]["seconds_spent"] == 12.5


def test_the_decision_is_the_training_label_and_the_disagreement_is_kept(split):
    project, rows, reviewer = split
    a = rows["a"]
    side = _side(project, a)
    # Before: the tie counts as unsafe.
    assert expert_labels(project, gold_set=side)[a.pk] == "unsafe"

    adjudication.adjudicate(claim=a, reviewer=reviewer, label="safe", note="ok")

    assert expert_labels(project, gold_set=side)[a.pk] == "safe"
    assert a.pk not in expert_labels(project, gold_set=not side)
    # The experts' labels stay, and so does the disagreement.
    assert sorted(a.labels.values_list("label", flat=True)) == ["safe", "unsafe"]
    breakdown = adjudication.agreement_breakdown(project)
    assert (breakdown["disagreements"], breakdown["open"]) == (1, 0)
    # Decided again: replaced, not added.
    adjudication.adjudicate(claim=a, reviewer=reviewer, label="unsafe")
    assert Adjudication.objects.get(claim=a).label == "unsafe"
    assert expert_labels(project, gold_set=side)[a.pk] == "unsafe"


def test_who_may_adjudicate_what(split, personas):
    project, rows, reviewer = split
    with pytest.raises(ApplicationError, match="needs the role admin or reviewer"):
        adjudication.adjudicate(
            claim=rows["a"], reviewer=personas.annotator, label="safe"
        )
    with pytest.raises(ApplicationError, match="do not disagree on claim"):
        adjudication.adjudicate(claim=rows["b"], reviewer=reviewer, label="safe")
    with pytest.raises(ApplicationError, match="label must be one of safe, unsafe"):
        adjudication.adjudicate(claim=rows["a"], reviewer=reviewer, label="unsure")
    # Admins adjudicate too.
    adjudication.adjudicate(claim=rows["a"], reviewer=personas.admin, label="safe")
    assert Adjudication.objects.count() == 1


def test_agreement_per_type_and_pair_with_alpha(split, personas):
    project, rows, _ = split
    breakdown = adjudication.agreement_breakdown(project)
    overall = breakdown["overall"]
    assert (overall["items"], overall["pairs"], overall["observed"]) == (2, 2, 0.5)
    by_type = {r["type"]: r for r in breakdown["by_type"]}
    assert (by_type["amount"]["items"], by_type["amount"]["observed"]) == (1, 0.0)
    assert (by_type["date"]["items"], by_type["date"]["observed"]) == (1, 1.0)
    # One class only on the date item: chance-corrected agreement undefined.
    assert by_type["date"]["alpha"] is None and by_type["date"]["kappa"] is None
    [pair] = breakdown["by_pair"]
    assert pair["experts"] == ("ann1", "ann2") and pair["items"] == 2

    # A third expert on the amount: alpha counts all three labels of it.
    third = get_user_model().objects.create_user("ann3", password="ann3-pass")
    services.membership_set(project=project, user=third, role=Role.EXPERT)
    labels.label_submit(claim=rows["a"], annotator=third, label="unsafe")
    breakdown = adjudication.agreement_breakdown(project)
    assert breakdown["overall"]["items"] == 2 and breakdown["overall"]["pairs"] == 4
    assert {tuple(p["experts"]) for p in breakdown["by_pair"]} == {
        ("ann1", "ann2"),
        ("ann1", "ann3"),
        ("ann2", "ann3"),
    }
    assert breakdown["overall"]["alpha"] is not None


def test_the_api_lists_and_decides_for_reviewers_only(split, api, personas):
    project, rows, reviewer = split
    url = f"/api/projects/{project.pk}/adjudications/"
    response = api(reviewer).get(url)
    assert response.status_code == 200, response.content
    [item] = response.json()
    assert item["claim"] == rows["a"].pk and item["decision"] is None
    assert [x["label"] for x in item["labels"]] == ["safe", "unsafe"]

    assert api(personas.annotator).get(url).status_code == 403
    assert api(personas.outsider).get(url).status_code == 404
    response = api(reviewer).post(
        url, {"claim": rows["b"].pk, "label": "safe"}, format="json"
    )
    assert response.status_code == 400
    assert "do not disagree" in response.json()["detail"]
    response = api(reviewer).post(
        url, {"claim": rows["a"].pk, "label": "safe", "note": "n"}, format="json"
    )
    assert response.status_code == 201, response.content
    assert response.json()["decision"]["reviewer"] == "rev"
    assert api(reviewer).get(url + "?open=1").json() == []


def test_the_page_shows_the_labels_and_takes_a_decision(split, client):
    project, rows, reviewer = split
    client.force_login(reviewer)
    html = client.get(f"/projects/{project.pk}/adjudicate/").content.decode()
    assert "looks fine" in html and "12.5" in html and "1 of 1 still open" in html
    response = client.post(
        f"/projects/{project.pk}/adjudicate/",
        {"claim": str(rows["a"].pk), "label": "unsafe", "note": "amount wrong"},
    )
    assert response.status_code == 302
    assert Adjudication.objects.get(claim=rows["a"]).note == "amount wrong"
    bad = client.post(
        f"/projects/{project.pk}/adjudicate/", {"claim": "x", "label": "safe"}
    )
    assert bad.status_code == 400 and "no such claim" in bad.content.decode()


def test_a_reviewer_never_decides_an_item_they_labelled(split, api, client):
    project, rows, reviewer = split
    a = rows["a"]
    # ann1 labelled a (safe) and is made a reviewer afterwards.
    party = a.labels.get(label="safe").annotator
    services.membership_set(project=project, user=party, role=Role.REVIEWER)
    with pytest.raises(ApplicationError, match="you labelled claim"):
        adjudication.adjudicate(claim=a, reviewer=party, label="safe")

    url = f"/api/projects/{project.pk}/adjudications/"
    assert api(party).get(url).json() == []  # not offered
    response = api(party).post(url, {"claim": a.pk, "label": "safe"}, format="json")
    assert response.status_code == 400
    assert "you labelled claim" in response.json()["detail"]

    client.force_login(party)
    page = f"/projects/{project.pk}/adjudicate/"
    assert f'data-claim="{a.pk}"' not in client.get(page).content.decode()
    response = client.post(page, {"claim": str(a.pk), "label": "safe"})
    assert response.status_code == 400
    assert "you labelled claim" in response.content.decode()
    assert not Adjudication.objects.exists()

    # A reviewer who did not label it sees it and decides it.
    [item] = api(reviewer).get(url).json()
    assert item["claim"] == a.pk
    response = api(reviewer).post(
        url, {"claim": a.pk, "label": "unsafe"}, format="json"
    )
    assert response.status_code == 201, response.content
    assert Adjudication.objects.get(claim=a).reviewer == reviewer
