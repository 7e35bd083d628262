"""Issue 10, expert labels (audit items 4, 8 and 9): bad labels are refused one
by one, never as a 500 and never taking the good labels sent with them down;
a client_id names one label of one expert, for good."""

from __future__ import annotations

import json
import threading
import uuid

import pytest
from django.db import connection

from annotator.labeling import labels
from annotator.models import Label, LabelReceipt, Membership, Role
from tests.annotator.factories import make_claim, make_document

pytestmark = pytest.mark.django_db


def _claims(project, n):
    document = make_document(project)
    return [make_claim(document) for _ in range(n)]


def _good(claim, label="safe", **extra):
    return {
        "client_id": str(uuid.uuid4()),
        "claim": claim.pk,
        "label": label,
        **extra,
    }


def _json(data) -> str:
    # Escaped, as a browser's JSON.stringify sends them: a lone surrogate has
    # no UTF-8 encoding of its own.
    return json.dumps(data, ensure_ascii=True)


def _send(client, project, labels):
    response = client.post(
        f"/api/projects/{project.pk}/labels/",
        _json({"labels": labels}),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert len(results) == len(labels)
    return results


def _around(client, project, bad, *, n_bad=1):
    """Send ``bad`` between two good labels; the results of the bad ones."""
    first, last = _claims(project, 2)
    labels = [_good(first), *bad, _good(last, "unsafe")]
    results = _send(client, project, labels)
    assert results[0]["status"] == "created", results[0]
    assert results[-1]["status"] == "created", results[-1]
    stored = dict(
        Label.objects.filter(claim__in=[first, last]).values_list("claim_id", "label")
    )
    assert stored == {first.pk: "safe", last.pk: "unsafe"}
    refused = results[1:-1]
    assert all(r["status"] == "error" and r["error"] for r in refused), refused
    return refused


def _messages(results):
    return [r["error"] for r in results]


# --- 8. one bad label is refused alone ----------------------------------------


@pytest.mark.bad_input
def test_an_over_long_note_is_refused_alone(personas, api):
    project = personas.project
    (target,) = _claims(project, 1)
    (refused,) = _around(
        api(personas.annotator), project, [_good(target, note="x" * 10_001)]
    )
    assert "note" in refused["error"]
    assert not Label.objects.filter(claim=target).exists()


@pytest.mark.bad_input
@pytest.mark.parametrize(
    "value",
    [
        {"city": ["Toronto", {"deep": "Ott\u0000awa"}]},
        ["ok", {"key\u0000": "value"}],
        {"a": [[["\ud800"]]]},
        {"lone\udfff": 1},
        "Ott\ud83dawa",
    ],
    ids=["nul-nested", "nul-key", "surrogate-nested", "surrogate-key", "surrogate"],
)
def test_unstorable_characters_nested_in_a_correction_are_refused_alone(
    personas, api, value
):
    project = personas.project
    (target,) = _claims(project, 1)
    (refused,) = _around(
        api(personas.annotator),
        project,
        [_good(target, "unsafe", correction={"value": value})],
    )
    assert refused["error"].startswith("correction:")
    assert not Label.objects.filter(claim=target).exists()


@pytest.mark.bad_input
def test_unstorable_characters_in_note_and_type_are_refused_alone(personas, api):
    project = personas.project
    a, b = _claims(project, 2)
    refused = _around(
        api(personas.annotator),
        project,
        [_good(a, note="see \ud800 here"), _good(b, correction={"type": "GPE\u0000"})],
    )
    assert "note" in refused[0]["error"]
    assert refused[1]["error"].startswith("correction:")


@pytest.mark.bad_input
def test_an_oversized_or_overdeep_correction_is_refused_alone(personas, api):
    project = personas.project
    a, b = _claims(project, 2)
    deep: list = ["Ottawa"]
    for _ in range(50):
        deep = [deep]
    refused = _around(
        api(personas.annotator),
        project,
        [
            _good(a, "unsafe", correction={"value": "y" * 10_001}),
            _good(b, "unsafe", correction={"value": deep}),
        ],
    )
    assert "over the limit" in refused[0]["error"]
    assert "nested deeper" in refused[1]["error"]
    assert not Label.objects.filter(claim__in=[a, b]).exists()


@pytest.mark.bad_input
def test_unknown_and_malformed_claim_ids_are_refused_alone(personas, api):
    project = personas.project
    ids = [99_999_999, 10**20, -1, "abc", None, 1.5]
    refused = _around(
        api(personas.annotator),
        project,
        [{**_good(_claims(project, 1)[0]), "claim": pk} for pk in ids],
    )
    assert all("claim" in message for message in _messages(refused))


@pytest.mark.bad_input
def test_another_projects_claim_is_as_missing_as_an_unknown_one(personas, api):
    project = personas.project
    theirs = make_claim(make_document(personas.outsider.projects.get()))
    missing = theirs.pk + 1000
    client = api(personas.annotator)
    refused = _around(
        client,
        project,
        [
            {**_good(theirs), "claim": theirs.pk},
            {**_good(theirs), "claim": missing},
        ],
    )
    assert refused[0]["error"] == refused[1]["error"] == "no such claim"
    # The labels endpoint answers both the same way too.
    replies = [
        client.post(
            "/api/labels/",
            {"claim": pk, "label": "safe", "client_id": str(uuid.uuid4())},
            format="json",
        )
        for pk in (theirs.pk, missing)
    ]
    assert [r.status_code for r in replies] == [400, 400]
    assert replies[0].json() == replies[1].json() == {"claim": ["no such claim"]}
    assert not Label.objects.filter(claim=theirs).exists()


@pytest.mark.bad_input
def test_a_label_given_as_a_number_is_refused_alone(personas, api):
    project = personas.project
    (target,) = _claims(project, 1)
    (refused,) = _around(
        api(personas.annotator), project, [{**_good(target), "label": 1}]
    )
    assert refused["error"].startswith("label:")


@pytest.mark.bad_input
def test_labels_that_are_not_objects_are_refused_alone(personas, api):
    refused = _around(
        api(personas.annotator),
        personas.project,
        [["safe", 1], "safe", 7, None],
    )
    assert all("dictionary" in message for message in _messages(refused[:3]))
    assert refused[3]["error"] == "No data provided"
    assert all(r["client_id"] == "" for r in refused)


@pytest.mark.bad_input
def test_labels_with_missing_fields_are_refused_alone(personas, api):
    project = personas.project
    (target,) = _claims(project, 1)
    label = _good(target)
    refused = _around(
        api(personas.annotator),
        project,
        [
            {},
            {k: v for k, v in label.items() if k != "label"},
            {k: v for k, v in label.items() if k != "claim"},
        ],
    )
    assert "required" in refused[0]["error"]
    assert refused[1]["error"].startswith("label:")
    assert refused[2]["error"].startswith("claim:")
    assert refused[1]["client_id"] == label["client_id"]


@pytest.mark.bad_input
def test_wrong_types_for_note_and_seconds_are_refused_alone(personas, api):
    project = personas.project
    a, b, c = _claims(project, 3)
    refused = _around(
        api(personas.annotator),
        project,
        [
            _good(a, note={"text": "a note"}),
            _good(b, seconds_spent=-3),
            _good(c, seconds_spent="soon"),
        ],
    )
    assert refused[0]["error"].startswith("note:")
    assert all(m.startswith("seconds_spent:") for m in _messages(refused[1:]))


@pytest.mark.bad_input
@pytest.mark.parametrize(
    "client_id",
    ["", "x" * 100, "not-a-uuid", {"id": 1}, None, str(uuid.uuid4()) + "0"],
    ids=["empty", "too-long", "not-uuid", "object", "null", "one-char-too-many"],
)
def test_a_malformed_client_id_is_refused_alone(personas, api, client_id):
    project = personas.project
    (target,) = _claims(project, 1)
    (refused,) = _around(
        api(personas.annotator),
        project,
        [{**_good(target), "client_id": client_id}],
    )
    assert refused["error"].startswith("client_id:")
    assert not Label.objects.filter(claim=target).exists()


@pytest.mark.bad_input
def test_a_batch_over_the_limit_stores_the_first_500_and_refuses_the_rest(
    personas, api, settings
):
    project = personas.project
    claims = _claims(project, 5)
    batch = [_good(claims[i % 5]) for i in range(labels.LABELS_BATCH_MAX + 2)]
    results = _send(api(personas.annotator), project, batch)
    assert [r["status"] for r in results[:5]] == ["created"] * 5
    assert {r["status"] for r in results[5:500]} == {"updated"}
    assert [r["status"] for r in results[500:]] == ["error", "error"]
    assert "not processed" in results[500]["error"]
    assert [r["client_id"] for r in results[500:]] == [
        label["client_id"] for label in batch[500:]
    ]
    assert Label.objects.filter(claim__project=project).count() == 5
    assert LabelReceipt.objects.count() == 500


@pytest.mark.bad_input
def test_json_nested_past_the_parsers_limit_is_a_400(personas, api):
    project = personas.project
    (target,) = _claims(project, 1)
    label = _json(_good(target))
    deep = "[" * 100_000 + "]" * 100_000
    body = f'{{"labels": [{label[:-1]}, "correction": {deep}}}]}}'
    client = api(personas.annotator)
    response = client.post(
        f"/api/projects/{project.pk}/labels/", body, content_type="application/json"
    )
    assert response.status_code == 400
    assert "nested" in response.json()["detail"]
    assert _send(client, project, [_good(target)])[0]["status"] == "created"


# --- 4. a client_id is one expert's, for one label -----------------------------


@pytest.mark.bad_input
def test_another_users_client_id_never_returns_their_label(personas, api):
    """The audit's case: a member of another project posts a known client_id."""
    mine = _claims(personas.project, 1)[0]
    client_id = str(uuid.uuid4())
    _send(
        api(personas.annotator),
        personas.project,
        [{**_good(mine, "unsafe", note="private reasoning"), "client_id": client_id}],
    )
    theirs = make_claim(make_document(personas.outsider.projects.get()))
    for user, claim in (
        (personas.outsider, theirs),
        (personas.annotator2, _claims(personas.project, 1)[0]),
    ):
        client = api(user)
        reply = client.post(
            "/api/labels/",
            {"claim": claim.pk, "label": "safe", "client_id": client_id},
            format="json",
        )
        assert reply.status_code == 409
        assert reply.json() == {"detail": "client_id already used"}
        (refused,) = _around(
            client,
            claim.project,
            [{**_good(claim), "client_id": client_id}],
        )
        assert refused["error"] == "client_id already used"
        assert refused["id"] is None and refused["claim"] is None
        assert not Label.objects.filter(annotator=user, claim=claim)
    stored = Label.objects.get(client_id=client_id)
    assert (stored.annotator, stored.label) == (personas.annotator, "unsafe")


@pytest.mark.bad_input
def test_a_client_id_reused_for_another_claim_is_refused(personas, api):
    project = personas.project
    a, b = _claims(project, 2)
    client_id = str(uuid.uuid4())
    client = api(personas.annotator)
    results = _send(
        client,
        project,
        [
            {**_good(a), "client_id": client_id},
            {**_good(b, "unsafe"), "client_id": client_id},
        ],
    )
    assert [r["status"] for r in results] == ["created", "error"]
    assert results[1]["error"] == "client_id already used"
    assert not Label.objects.filter(claim=b).exists()


@pytest.mark.bad_input
def test_a_client_id_a_deleted_experts_label_holds_is_refused(personas, api):
    """Deleting an expert keeps their labels (no one's) and drops their
    receipts: the label alone still holds its client_id."""
    from django.contrib.auth import get_user_model

    project = personas.project
    theirs, mine = _claims(project, 2)
    leaving = get_user_model().objects.create_user("leaving", password="x-pass-1")
    Membership.objects.create(user=leaving, project=project, role=Role.EXPERT)
    client_id = str(uuid.uuid4())
    _send(api(leaving), project, [{**_good(theirs), "client_id": client_id}])
    leaving.delete()
    assert not LabelReceipt.objects.filter(pk=client_id).exists()
    (refused,) = _around(
        api(personas.annotator), project, [{**_good(mine), "client_id": client_id}]
    )
    assert refused["error"] == "client_id already used"
    assert not Label.objects.filter(claim=mine).exists()
    # Nothing of the refused save is kept, its receipt included.
    assert not LabelReceipt.objects.filter(pk=client_id).exists()
    assert Label.objects.get(client_id=client_id).annotator is None


def test_a_relabel_replaces_every_value_and_keeps_the_first_save_time(personas, api):
    project = personas.project
    (target,) = _claims(project, 1)
    client = api(personas.annotator)
    first = _good(target, "unsafe", note="wrong city", seconds_spent=4.5)
    first["correction"] = {"type": "GPE", "value": "Ottawa"}
    (created,) = _send(client, project, [first])
    before = Label.objects.get(pk=created["id"])
    (updated,) = _send(client, project, [_good(target, "safe", seconds_spent=2.0)])
    assert (updated["status"], updated["id"]) == ("updated", created["id"])
    after = Label.objects.get(pk=created["id"])
    assert (after.label, after.note, after.correction, after.seconds_spent) == (
        "safe",
        "",
        None,
        2.0,
    )
    assert str(after.client_id) != first["client_id"]
    assert after.created_at == before.created_at < after.updated_at
    assert after.source == Label.Source.UI


# --- 9. a stale resend never overwrites a later decision ------------------------


@pytest.mark.bad_input
def test_a_stale_resend_of_the_first_label_is_a_duplicate(personas, api):
    project = personas.project
    target, other = _claims(project, 2)
    client = api(personas.annotator)
    first = _good(target, "safe")
    assert _send(client, project, [first])[0]["status"] == "created"
    assert _send(client, project, [_good(target, "unsafe")])[0]["status"] == "updated"
    results = _send(client, project, [first, _good(other)])
    assert [r["status"] for r in results] == ["duplicate", "created"]
    stored = Label.objects.get(claim=target)
    assert stored.label == "unsafe"
    assert results[0]["id"] == stored.pk
    assert LabelReceipt.objects.filter(annotator=personas.annotator).count() == 3


@pytest.mark.bad_input
def test_a_stale_resend_through_the_labels_endpoint_is_a_duplicate(personas, api):
    (target,) = _claims(personas.project, 1)
    client = api(personas.annotator)

    def post(label, client_id):
        return client.post(
            "/api/labels/",
            {"claim": target.pk, "label": label, "client_id": client_id},
            format="json",
        )

    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    assert post("safe", a).status_code == 201
    assert post("unsafe", b).status_code == 200
    again = post("safe", a)
    assert again.status_code == 200 and again.json()["label"] == "unsafe"
    assert Label.objects.get(claim=target).label == "unsafe"
    assert set(LabelReceipt.objects.values_list("client_id", flat=True)) == {
        uuid.UUID(a),
        uuid.UUID(b),
    }


@pytest.mark.bad_input
def test_a_resend_after_undo_does_not_bring_the_label_back(personas, api):
    project = personas.project
    target, other = _claims(project, 2)
    client = api(personas.annotator)
    label = _good(target, "unsafe")
    _send(client, project, [label])
    undo = client.delete(f"/api/projects/{project.pk}/labels/{label['client_id']}/")
    assert undo.json() == {"claim": target.pk}
    results = _send(client, project, [label, _good(other)])
    assert [r["status"] for r in results] == ["duplicate", "created"]
    assert results[0]["id"] is None
    assert not Label.objects.filter(claim=target).exists()
    # A new decision, under a new client_id, is stored as usual.
    assert _send(client, project, [_good(target)])[0]["status"] == "created"


# --- the labels endpoint goes through the service ------------------------------


@pytest.mark.bad_input
def test_changing_a_label_through_the_api_checks_it_like_a_new_one(personas, api):
    a, b = _claims(personas.project, 2)
    client = api(personas.annotator)
    created = client.post(
        "/api/labels/",
        {"claim": a.pk, "label": "safe", "client_id": str(uuid.uuid4())},
        format="json",
    ).json()
    url = f"/api/labels/{created['id']}/"
    for change in (
        {"correction": {"value": {"city": "Ott\u0000awa"}}},
        {"note": "n" * 10_001},
        {"correction": {"value": ["\ud800"]}},
        {"correction": {"context": "quoted"}},
    ):
        reply = client.patch(url, _json(change), content_type="application/json")
        assert reply.status_code == 400, (change, reply.content)
    theirs = str(uuid.uuid4())
    api(personas.annotator2).post(
        "/api/labels/",
        {"claim": b.pk, "label": "unsafe", "client_id": theirs},
        format="json",
    )
    reply = client.patch(url, {"label": "unsafe", "client_id": theirs}, format="json")
    assert reply.status_code == 409
    good = client.patch(
        url, {"label": "unsafe", "note": "on reflection"}, format="json"
    )
    assert good.status_code == 200, good.content
    stored = Label.objects.get(pk=created["id"])
    assert (stored.label, stored.note) == ("unsafe", "on reflection")
    assert stored.correction is None
    # What a client read, sent back changed: its own client_id is no resend.
    read = client.get(url).json()
    assert (
        client.put(url, {**read, "label": "unsure"}, format="json").status_code == 200
    )
    stored.refresh_from_db()
    assert (stored.label, str(stored.client_id)) == (
        "unsure",
        read["client_id"],
    )


# --- roles, receipts and races -----------------------------------------------


def test_viewers_cannot_label_through_the_labels_endpoint(personas, api):
    (target,) = _claims(personas.project, 1)
    Membership.objects.filter(
        project=personas.project, user=personas.annotator2
    ).update(role=Role.VIEWER)
    reply = api(personas.annotator2).post(
        "/api/labels/",
        {"claim": target.pk, "label": "safe"},
        format="json",
    )
    assert reply.status_code == 400
    assert reply.json() == {"claim": ["no such claim"]}
    assert not Label.objects.exists()


def test_an_expert_cannot_change_another_experts_label(personas, api):
    (target,) = _claims(personas.project, 1)
    stored = Label.objects.create(
        claim=target, annotator=personas.annotator2, label="unsafe"
    )
    url = f"/api/labels/{stored.pk}/"
    assert api(personas.annotator).patch(url, {"label": "safe"}).status_code == 404
    reply = api(personas.admin).patch(url, {"label": "safe"}, format="json")
    assert reply.status_code == 200
    stored.refresh_from_db()
    assert (stored.label, stored.annotator) == ("safe", personas.annotator2)


def test_every_processed_client_id_keeps_a_receipt(personas, api):
    a, b = _claims(personas.project, 2)
    client = api(personas.annotator)
    ids = [str(uuid.uuid4()) for _ in range(3)]
    _send(
        client,
        personas.project,
        [
            {**_good(a), "client_id": ids[0]},
            {**_good(a, "unsafe"), "client_id": ids[1]},
        ],
    )
    client.post(
        "/api/labels/",
        {"claim": b.pk, "label": "safe", "client_id": ids[2]},
        format="json",
    )
    receipts = LabelReceipt.objects.values_list("client_id", "annotator_id", "claim_id")
    assert sorted(receipts) == sorted(
        [
            (uuid.UUID(ids[0]), personas.annotator.pk, a.pk),
            (uuid.UUID(ids[1]), personas.annotator.pk, a.pk),
            (uuid.UUID(ids[2]), personas.annotator.pk, b.pk),
        ]
    )


@pytest.mark.django_db(transaction=True)
def test_the_same_label_sent_twice_at_once_is_stored_once(personas):
    """Two threads, each with its own database connection, send one label."""
    (target,) = _claims(personas.project, 1)
    client_id = uuid.uuid4()
    barrier = threading.Barrier(2)
    outcomes = []

    def send():
        try:
            barrier.wait()
            (result,) = labels.labels_submit(
                project=personas.project,
                annotator=personas.annotator,
                labels=[{"client_id": client_id, "claim": target.pk, "label": "safe"}],
            )
            outcomes.append(result.status)
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["created", "duplicate"]
    assert Label.objects.filter(claim=target).count() == 1
    assert LabelReceipt.objects.filter(pk=client_id).exists()
