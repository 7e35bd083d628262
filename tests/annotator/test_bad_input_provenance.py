"""Bad input to the online provenance check (POST /api/provenance/check/):
each refused with a clear 4xx naming the problem, never a 500, and nothing
stored."""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from annotator.models import Claim, Document
from tests.annotator.factories import make_project

pytestmark = [pytest.mark.bad_input, pytest.mark.django_db]

CHECK = "/api/provenance/check/"
GOOD = {
    "id": "q1",
    "query": "Where is the Eiffel Tower?",
    "answer": "The Eiffel Tower is in Paris.",
    "contexts": ["The Eiffel Tower stands in Paris, France."],
}
PROJECT = object()  # stands for the provenance project's id


def _body(**fields) -> bytes:
    item = {"project": PROJECT, **GOOD, **fields}
    return json.dumps(item, ensure_ascii=True, default=lambda _: "PROJECT").encode()


def _without(key: str) -> bytes:
    return json.dumps(
        {k: v for k, v in {"project": "PROJECT", **GOOD}.items() if k != key}
    ).encode()


# (body, status, words the answer names the problem with)
CASES = {
    "body a list": (b"[1, 2]", 400, "the body must be a JSON object"),
    "body not JSON": (b'{"project": ', 400, "JSON parse error"),
    "project missing": (_without("project"), 400, "must be a project id"),
    "project a string": (_body(project="one"), 400, "must be a project id"),
    "project true": (_body(project=True), 400, "must be a project id"),
    "project a float": (_body(project=1.5), 400, "must be a project id"),
    "project a huge number": (_body(project=10**30), 404, "no such project"),
    "project unknown": (_body(project=2**31 - 1), 404, "no such project"),
    "id missing": (_without("id"), 400, "field 'id' must be a non-empty string"),
    "id empty": (_body(id="  "), 400, "field 'id' must be a non-empty string"),
    "id a nested object": (_body(id={"a": {"b": 1}}), 400, "field 'id'"),
    "id of 5,000 digits": (
        _body().replace(b'"q1"', b"9" * 5000),
        400,
        "JSON parse error",
    ),
    "answer missing": (_without("answer"), 400, "field 'answer'"),
    "answer empty": (_body(answer=""), 400, "field 'answer' must be a non-empty"),
    "answer a number": (_body(answer=42), 400, "field 'answer'"),
    "answer NaN": (
        _body().replace(b'"The Eiffel Tower is in Paris."', b"NaN"),
        400,
        "JSON parse error",
    ),
    "answer with NUL": (_body(answer="Paris\u0000"), 400, "holds a NUL"),
    "answer a lone surrogate": (_body(answer="\ud800"), 400, "lone surrogate"),
    "query a list": (_body(query=["where"]), 400, "field 'query' must be a string"),
    "query with NUL": (_body(query="Where\u0000?"), 400, "field 'query' holds a NUL"),
    "query too long": (
        _body(query="w" * (settings.PROVENANCE_CHECK_MAX_QUERY_CHARS + 1)),
        400,
        "PROVENANCE_CHECK_MAX_QUERY_CHARS",
    ),
    "a key a lone surrogate": (_body(**{"trace\udfff": 1}), 400, "lone surrogate"),
    "contexts missing": (_without("contexts"), 400, "'contexts' must be a non-empty"),
    "contexts a string": (_body(contexts="Paris"), 400, "must be a non-empty list"),
    "contexts empty": (_body(contexts=[]), 400, "must be a non-empty list"),
    "every context blank": (_body(contexts=["", " "]), 400, "every context is empty"),
    "a context a number": (_body(contexts=[7]), 400, "contexts[0] must be a string"),
    "a context without text": (
        _body(contexts=[{"id": "a", "body": "Paris"}]),
        400,
        "contexts[0] must be a string or an object with a 'text' string",
    ),
    "a context id a nested object": (
        _body(contexts=[{"id": {"x": [1]}, "text": "Paris"}]),
        400,
        "contexts[0]: 'id' must be a string or number",
    ),
    "context ids repeated": (
        _body(contexts=[{"id": "a", "text": "x."}, {"id": "a", "text": "y."}]),
        400,
        "id 'a' is repeated",
    ),
    "a context with NUL": (_body(contexts=["Par\u0000is"]), 400, "holds a NUL"),
    "too many contexts": (
        _body(contexts=["Paris."] * (settings.PROVENANCE_CHECK_MAX_SENTENCES + 1)),
        400,
        "PROVENANCE_CHECK_MAX_SENTENCES",
    ),
    "too many context sentences": (
        _body(
            contexts=[
                "It is in Paris. " * (settings.PROVENANCE_CHECK_MAX_SENTENCES + 1)
            ]
        ),
        400,
        "PROVENANCE_CHECK_MAX_SENTENCES",
    ),
    "too many answer sentences": (
        _body(answer="It is in Paris. " * (settings.PROVENANCE_CHECK_MAX_CLAIMS + 1)),
        400,
        "PROVENANCE_CHECK_MAX_CLAIMS",
    ),
    "an oversize context": (
        _body(contexts=["Paris " * 50_000]),
        413,
        "PROVENANCE_CHECK_MAX_BYTES",
    ),
    "nested past the recursion limit": (
        _body().replace(b'"q1"', b"[" * 20_000 + b"]" * 20_000),
        400,
        "nested too deeply",
    ),
    "label unknown": (_body(label="maybe"), 400, "field 'label' must be one of"),
}


@pytest.fixture
def provenance(personas, settings):
    # The limits at their defaults (CASES reads them); BM25 and no scorer,
    # so nothing loads.
    settings.PROVENANCE_RELEVANCE = "lexical"
    settings.DEFAULT_SCORER = ""
    return make_project(kind="provenance")


@pytest.mark.parametrize("case", CASES)
def test_a_bad_item_is_refused_with_a_4xx_naming_the_problem(
    personas, api, provenance, case
):
    body, status, words = CASES[case]
    body = body.replace(b'"PROJECT"', str(provenance.pk).encode())
    response = api(personas.admin).post(CHECK, body, content_type="application/json")
    assert response.status_code == status, response.content
    assert words in json.dumps(response.json(), ensure_ascii=False)
    assert not Document.objects.filter(project=provenance).exists()
    assert not Claim.objects.filter(project=provenance).exists()


def test_a_form_body_is_refused_with_415(personas, api, provenance):
    response = api(personas.admin).post(
        CHECK, {"project": provenance.pk, "id": "q1"}, format="multipart"
    )
    assert response.status_code == 415
    assert "Unsupported media type" in response.json()["detail"]


def test_the_good_item_beside_them_is_checked(personas, api, provenance):
    response = api(personas.admin).post(
        CHECK,
        _body().replace(b'"PROJECT"', str(provenance.pk).encode()),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["verdict"] == "unscored"
