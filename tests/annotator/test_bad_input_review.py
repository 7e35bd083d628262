"""Bad input on the review surfaces, the adjudication queue and the
guideline (API and pages): a clear 4xx naming the problem, never a 500, and
the decision or guideline already stored kept as it was."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model

from annotator.labeling import adjudication, guidelines, labels
from annotator.labeling.labels import LABEL_NOTE_MAX_CHARS
from annotator.models import Adjudication, Guideline, Role
from annotator.projects import services
from tests.annotator.factories import make_claim, make_document

pytestmark = [pytest.mark.bad_input, pytest.mark.django_db]


@pytest.fixture
def review(personas):
    """A disagreement on ``a`` decided once (safe, "kept"), a second open one
    on ``b``, a claim of another project, a reviewer, and a guideline."""
    project = personas.project
    document = make_document(project, external_id="doc")
    a = make_claim(document, external_id="a")
    b = make_claim(document, external_id="b")
    for claim in (a, b):
        labels.label_submit(claim=claim, annotator=personas.annotator, label="safe")
        labels.label_submit(claim=claim, annotator=personas.annotator2, label="unsafe")
    reviewer = get_user_model().objects.create_user("rev", password="rev-pass")
    services.membership_set(project=project, user=reviewer, role=Role.REVIEWER)
    adjudication.adjudicate(claim=a, reviewer=reviewer, label="safe", note="kept")
    elsewhere = personas.outsider.memberships.get().project
    foreign = make_claim(make_document(elsewhere, external_id="f"))
    guidelines.guideline_save(project=project, user=personas.admin, text="# Rules\n")
    return project, a, b, foreign, reviewer


def _post_json(client, url, body):
    # As JSON with \u escapes: a lone surrogate has no UTF-8 to be sent in.
    return client.generic(
        "POST", url, json.dumps(body).encode(), content_type="application/json"
    )


def _decisions_kept(a, b):
    decision = Adjudication.objects.get(claim=a)
    assert (decision.label, decision.note) == ("safe", "kept")
    assert not Adjudication.objects.filter(claim=b).exists()


def _guideline_kept(project):
    assert list(Guideline.objects.filter(project=project).values_list("text")) == [
        ("# Rules",)
    ]


ADJUDICATION_BODIES = {
    "claim a word": ({"claim": "abc", "label": "safe"}, 400, "claim"),
    "claim a list": ({"claim": [1], "label": "safe"}, 400, "claim"),
    "claim true": ({"claim": True, "label": "safe"}, 400, "claim"),
    "claim past bigint": ({"claim": 10**30, "label": "safe"}, 404, "no such"),
    "claim unknown": ({"claim": 2**40, "label": "safe"}, 404, "no such"),
    "claim missing": ({"label": "safe"}, 400, "claim"),
    "label missing": ({"claim": "B"}, 400, "label"),
    "label unknown": ({"claim": "B", "label": "maybe"}, 400, "label"),
    "label a number": ({"claim": "B", "label": 1}, 400, "label"),
    "note a number": ({"claim": "B", "label": "safe", "note": 5}, 400, "note"),
    "note a list": ({"claim": "B", "label": "safe", "note": ["x"]}, 400, "note"),
    "note too long": (
        {"claim": "B", "label": "safe", "note": "n" * (LABEL_NOTE_MAX_CHARS + 1)},
        400,
        "note",
    ),
    "note with NUL": (
        {"claim": "B", "label": "safe", "note": "a\x00b"},
        400,
        "note",
    ),
    "note a lone surrogate": (
        {"claim": "B", "label": "safe", "note": "\ud800"},
        400,
        "surrogate",
    ),
    "decided item, note with NUL": (
        {"claim": "A", "label": "unsafe", "note": "\x00"},
        400,
        "note",
    ),
    "decided item, lone surrogate": (
        {"claim": "A", "label": "unsafe", "note": "x\udfff"},
        400,
        "surrogate",
    ),
}


@pytest.mark.parametrize("case", ADJUDICATION_BODIES, ids=list(ADJUDICATION_BODIES))
def test_bad_adjudication_bodies_are_refused(review, api, case):
    project, a, b, _, reviewer = review
    body, status, named = ADJUDICATION_BODIES[case]
    body = {**body}
    if body.get("claim") in ("A", "B"):
        body["claim"] = {"A": a.pk, "B": b.pk}[body["claim"]]
    response = _post_json(
        api(reviewer), f"/api/projects/{project.pk}/adjudications/", body
    )
    assert response.status_code == status, response.content
    assert named in response.content.decode()
    _decisions_kept(a, b)


def test_another_projects_claim_is_not_found(review, api):
    project, a, b, foreign, reviewer = review
    response = api(reviewer).post(
        f"/api/projects/{project.pk}/adjudications/",
        {"claim": foreign.pk, "label": "safe"},
        format="json",
    )
    assert response.status_code == 404
    assert not Adjudication.objects.filter(claim=foreign).exists()
    _decisions_kept(a, b)


@pytest.mark.parametrize(
    "body",
    [b"[1, 2]", b'"safe"', b"{not json", b'{"claim": 1, "label": "safe"'],
    ids=["a list", "a string", "not JSON", "cut short"],
)
def test_adjudication_bodies_that_are_not_an_object(review, api, body):
    project, a, b, _, reviewer = review
    response = api(reviewer).generic(
        "POST",
        f"/api/projects/{project.pk}/adjudications/",
        body,
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    _decisions_kept(a, b)


@pytest.mark.parametrize(
    "form",
    [
        {"claim": "-1", "label": "safe"},
        {"claim": "1e3", "label": "safe"},
        {"claim": "\u0663", "label": "safe"},  # an Arabic-Indic three
        {"claim": "9" * 30, "label": "safe"},
        {"claim": "FOREIGN", "label": "safe"},
        {"claim": "B"},
        {"claim": "B", "label": "maybe"},
        {"claim": "B", "label": "safe", "note": "a\x00b"},
        {"claim": "A", "label": "unsafe", "note": "\x00"},
        {"claim": "B", "label": "safe", "note": "n" * (LABEL_NOTE_MAX_CHARS + 1)},
    ],
    ids=[
        "negative id",
        "exponent",
        "non-ASCII digit",
        "past bigint",
        "other project's claim",
        "label missing",
        "label unknown",
        "note with NUL",
        "decided item, note with NUL",
        "note too long",
    ],
)
def test_bad_adjudication_forms_are_refused_on_the_page(review, client, form):
    project, a, b, foreign, reviewer = review
    ids = {"A": a.pk, "B": b.pk, "FOREIGN": foreign.pk}
    form = {k: str(ids.get(v, v)) for k, v in form.items()}
    client.force_login(reviewer)
    response = client.post(f"/projects/{project.pk}/adjudicate/", form)
    assert response.status_code == 400
    assert 'role="alert"' in response.content.decode()
    _decisions_kept(a, b)
    assert not Adjudication.objects.filter(claim=foreign).exists()


GUIDELINE_BODIES = {
    "text missing": ({}, "text"),
    "text a number": ({"text": 5}, "text"),
    "text a list": ({"text": ["# Rules"]}, "text"),
    "text an object": ({"text": {"md": "# Rules"}}, "text"),
    "text null": ({"text": None}, "text"),
    "text empty": ({"text": ""}, "text"),
    "text blank": ({"text": " \n\t "}, "text"),
    "text with NUL": ({"text": "# Rules\x00"}, "text"),
    "text a lone surrogate": ({"text": "# Rules \ud800"}, "text"),
    "text too long": ({"text": "x" * (guidelines.GUIDELINE_MAX_CHARS + 1)}, "text"),
}


@pytest.mark.parametrize("case", GUIDELINE_BODIES, ids=list(GUIDELINE_BODIES))
def test_bad_guideline_bodies_are_refused(review, api, personas, case):
    project = review[0]
    body, named = GUIDELINE_BODIES[case]
    response = _post_json(
        api(personas.admin), f"/api/projects/{project.pk}/guideline/", body
    )
    assert response.status_code == 400, response.content
    assert named in response.content.decode()
    _guideline_kept(project)


@pytest.mark.parametrize(
    "query, status",
    [
        ("version=abc", 400),
        ("version=-1", 400),
        ("version=1.5", 400),
        ("version=%00", 400),
        ("version=" + "9" * 30, 400),
        ("version=0", 404),
        ("version=99", 404),
        ("version=" + "9" * 18, 404),
    ],
)
def test_bad_guideline_versions_are_refused(review, api, personas, query, status):
    project = review[0]
    response = api(personas.annotator).get(
        f"/api/projects/{project.pk}/guideline/?{query}"
    )
    assert response.status_code == status, response.content
    assert "version" in response.content.decode()


def test_another_projects_guideline_is_not_found(review, api, personas):
    project = review[0]
    url = f"/api/projects/{project.pk}/guideline/"
    assert api(personas.outsider).get(url).status_code == 404
    response = api(personas.outsider).post(url, {"text": "# Mine"}, format="json")
    assert response.status_code == 404
    _guideline_kept(project)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "# Rules\x00",
        "x" * (guidelines.GUIDELINE_MAX_CHARS + 1),
    ],
    ids=["empty", "blank", "NUL", "too long"],
)
@pytest.mark.parametrize("action", ["save", "preview"])
def test_bad_guideline_text_is_refused_on_the_page(
    review, client, personas, text, action
):
    project = review[0]
    client.force_login(personas.admin)
    response = client.post(
        f"/projects/{project.pk}/guideline/", {"text": text, "action": action}
    )
    assert response.status_code == 400
    assert "text:" in response.content.decode()
    _guideline_kept(project)


@pytest.mark.parametrize(
    "query", ["version=abc", "version=-1", "version=\u0663", "version=" + "9" * 30]
)
def test_bad_guideline_versions_on_the_page_are_not_found(
    review, client, personas, query
):
    project = review[0]
    client.force_login(personas.annotator)
    assert client.get(f"/projects/{project.pk}/guideline/?{query}").status_code == 404
