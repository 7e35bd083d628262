import random
import threading
import uuid
from datetime import timedelta
from functools import partial

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from annotator.labeling import gold as gold_set
from annotator.labeling import handout, labels, queue
from annotator.models import Claim, ClaimScore, Label, Lease
from tests.annotator.factories import aligned, make_claim, make_document, make_project

pytestmark = pytest.mark.django_db


def _claims(project, n, *, scores=None):
    document = make_document(project)
    return [
        make_claim(document, score=None if scores is None else scores[i])
        for i in range(n)
    ]


def _next(client, project, **body):
    response = client.post(
        f"/api/projects/{project.pk}/queue/next/", body, format="json"
    )
    assert response.status_code == 200, response.content
    return [item["id"] for item in response.json()["items"]]


def _label(client, project, claim, label="safe", client_id=None, **extra):
    body = {
        "labels": [
            {
                "client_id": str(client_id or uuid.uuid4()),
                "claim": claim,
                "label": label,
                **extra,
            }
        ]
    }
    response = client.post(f"/api/projects/{project.pk}/labels/", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _no_overlap(project):
    """One expert per claim, all in the strategy's order (no gold slice)."""
    project.overlap_share = 0.0
    project.gold_share = 0.0
    project.save(update_fields=["overlap_share", "gold_share"])


def test_two_annotators_never_get_the_same_item(personas, api):
    project = personas.project
    _no_overlap(project)
    _claims(project, 10)
    first = _next(api(personas.annotator), project, count=6)
    second = _next(api(personas.annotator2), project, count=6)
    assert len(first) == 6 and len(second) == 4
    assert not set(first) & set(second)


def test_reload_gets_own_leases_back_first(personas, api):
    project = personas.project
    _no_overlap(project)
    _claims(project, 10)
    client = api(personas.annotator)
    first = _next(client, project, count=3)
    assert _next(client, project, count=3) == first
    more = _next(client, project, count=3, exclude=first)
    assert not set(more) & set(first)


def test_expired_lease_returns_item_to_pool(personas, api):
    project = personas.project
    _no_overlap(project)
    (claim,) = _claims(project, 1)
    assert _next(api(personas.annotator), project) == [claim.pk]
    assert _next(api(personas.annotator2), project) == []
    Lease.objects.filter(claim=claim).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert _next(api(personas.annotator2), project) == [claim.pk]


def test_overlap_items_go_to_as_many_experts_as_configured(personas, api, admin_user):
    project = personas.project
    project.overlap_share = 1.0
    project.overlap_labels = 2
    project.save()
    project.members.add(admin_user)
    (claim,) = _claims(project, 1)
    assert _next(api(personas.annotator), project) == [claim.pk]
    assert _next(api(personas.annotator2), project) == [claim.pk]
    # Two experts hold it: a third gets nothing until one lets go.
    assert _next(api(admin_user), project) == []
    _label(api(personas.annotator), project, claim.pk, "unsure")
    assert _next(api(admin_user), project) == [claim.pk]


def test_unsure_leaves_the_item_for_another_expert(personas, api):
    project = personas.project
    _no_overlap(project)
    (claim,) = _claims(project, 1)
    client = api(personas.annotator)
    assert _next(client, project) == [claim.pk]
    _label(client, project, claim.pk, "unsure")
    assert _next(client, project) == []
    assert _next(api(personas.annotator2), project) == [claim.pk]
    _label(api(personas.annotator2), project, claim.pk, "unsafe")
    assert Label.objects.filter(claim=claim).count() == 2


def test_a_resent_label_is_stored_once(personas, api):
    project = personas.project
    (claim,) = _claims(project, 1)
    client = api(personas.annotator)
    client_id = uuid.uuid4()
    first = _label(client, project, claim.pk, "unsafe", client_id=client_id)
    again = _label(client, project, claim.pk, "unsafe", client_id=client_id)
    assert first["results"][0]["status"] == "created"
    assert again["results"][0]["status"] == "duplicate"
    assert again["results"][0]["id"] == first["results"][0]["id"]
    assert Label.objects.filter(claim=claim).count() == 1
    # A second decision (new client id) replaces the first, it does not add one.
    changed = _label(client, project, claim.pk, "safe", note="on reflection")
    assert changed["results"][0]["status"] == "updated"
    stored = Label.objects.get(claim=claim)
    assert (stored.label, stored.note) == ("safe", "on reflection")


def test_someone_elses_client_id_is_refused(personas, api):
    project = personas.project
    a, b = _claims(project, 2)
    client_id = uuid.uuid4()
    _label(api(personas.annotator), project, a.pk, client_id=client_id)
    reply = _label(api(personas.annotator2), project, b.pk, client_id=client_id)
    assert reply["results"][0]["status"] == "error"
    assert not Label.objects.filter(annotator=personas.annotator2).exists()


def test_submit_records_time_note_and_correction_and_releases_lease(personas, api):
    project = personas.project
    (claim,) = _claims(project, 1)
    client = api(personas.annotator)
    _next(client, project)
    _label(
        client,
        project,
        claim.pk,
        "unsafe",
        seconds_spent=3.25,
        note="wrong city",
        correction={"type": "GPE", "value": "Ottawa"},
    )
    stored = Label.objects.get(claim=claim)
    assert stored.seconds_spent == 3.25
    assert stored.correction == {"type": "GPE", "value": "Ottawa"}
    assert stored.source == Label.Source.UI
    assert not Lease.objects.filter(claim=claim).exists()


def test_undo_deletes_own_label_and_leases_it_back(personas, api):
    project = personas.project
    _no_overlap(project)
    (claim,) = _claims(project, 1)
    client = api(personas.annotator)
    client_id = uuid.uuid4()
    _label(client, project, claim.pk, "safe", client_id=client_id)
    url = f"/api/projects/{project.pk}/labels/{client_id}/"
    assert api(personas.annotator2).delete(url).json() == {"claim": None}
    assert client.delete(url).json() == {"claim": claim.pk}
    assert client.delete(url).json() == {"claim": None}
    assert not Label.objects.exists()
    assert _next(api(personas.annotator2), project) == []
    assert _next(client, project) == [claim.pk]


def test_a_claim_reaches_experts_only_once_checked(personas, api):
    """Before its check a claim has no evidence to judge: it is not handed
    out, and the progress says how many wait for their check."""
    project = personas.project
    document = make_document(project)
    waiting = make_claim(document, checked_at=None)
    client = api(personas.annotator)
    assert _next(client, project) == []
    progress = client.get(f"/api/projects/{project.pk}/progress/").json()
    assert (progress["remaining"], progress["unchecked"], progress["claims"]) == (
        0,
        1,
        True,
    )
    waiting.checked_at = timezone.now()
    waiting.save()
    assert _next(client, project) == [waiting.pk]
    empty = make_project(members=[personas.annotator])
    progress = client.get(f"/api/projects/{empty.pk}/progress/").json()
    assert (progress["unchecked"], progress["claims"]) == (0, False)


def test_progress_counts_what_is_left_only_so_far(personas, api, monkeypatch):
    """A million claims are not counted for every batch: past the bound the
    progress says there are more."""
    project = personas.project
    _claims(project, 5)
    url = f"/api/projects/{project.pk}/progress/"
    client = api(personas.annotator)
    assert client.get(url).json()["remaining_more"] is False
    monkeypatch.setattr(queue, "REMAINING_COUNTED", 3)
    progress = client.get(url).json()
    assert (progress["remaining"], progress["remaining_more"]) == (3, True)
    monkeypatch.setattr(queue, "REMAINING_COUNTED", 5)
    progress = client.get(url).json()
    assert (progress["remaining"], progress["remaining_more"]) == (5, False)


def test_progress_and_recent_labels(personas, api):
    project = personas.project
    claims = _claims(project, 5)
    client = api(personas.annotator)
    for p in claims[:3]:
        _label(client, project, p.pk, seconds_spent=2.0)
    progress = client.get(f"/api/projects/{project.pk}/progress/").json()
    assert progress["done"] == 3 and progress["last_hour"] == 3
    assert progress["per_hour"] == 1800.0
    assert progress["remaining"] == 2
    mine = client.get(f"/api/projects/{project.pk}/labels/mine/").json()
    assert mine["count"] == 3
    assert mine["results"][0]["claim"] == claims[2].pk
    assert mine["results"][0]["hypothesis"] == "GPE: Toronto"
    assert (
        api(personas.annotator2)
        .get(f"/api/projects/{project.pk}/labels/mine/")
        .json()["count"]
        == 0
    )


def test_uncertainty_hands_out_scores_nearest_the_threshold_first(personas, api):
    project = personas.project
    _no_overlap(project)
    project.nli_threshold = 0.5
    project.save()
    far, unscored, near, middle = _claims(project, 4, scores=[0.99, None, 0.52, 0.3])
    ids = _next(api(personas.annotator), project, count=4)
    assert ids == [near.pk, middle.pk, far.pk, unscored.pk]


def test_a_changed_threshold_reorders_the_queue(personas, api):
    project = personas.project
    _no_overlap(project)
    project.nli_threshold = 0.5
    project.save()
    high, near, low = _claims(project, 3, scores=[0.9, 0.55, 0.2])
    assert _next(api(personas.annotator), project, count=1) == [near.pk]
    # Any path that moves the threshold (here a plain save, as the admin does).
    project.nli_threshold = 0.85
    project.save()
    assert _next(api(personas.annotator2), project, count=2) == [high.pk, low.pk]


def test_a_batch_of_items_costs_the_same_few_queries_as_one(personas):
    from django.test.utils import CaptureQueriesContext

    project = personas.project
    claims = [make_claim(make_document(project)) for _ in range(6)]
    sibling = make_claim(make_document(project), hypothesis="")

    def queries(ids):
        with CaptureQueriesContext(connection) as captured:
            items = handout.labeling_items(
                project=project, annotator=personas.annotator, ids=ids
            )
        assert [item["id"] for item in items] == ids
        return len(captured.captured_queries), items

    one, _ = queries([claims[0].pk])
    many, items = queries([p.pk for p in claims[1:]] + [sibling.pk])
    assert one == many == 3
    # A hypothesis the check has not stored yet is rendered from the value.
    assert items[-1]["siblings"][0]["hypothesis"] == "GPE: Toronto"


def test_random_strategy_is_registered_and_stable_per_expert(personas, api):
    project = personas.project
    _no_overlap(project)
    project.queue_strategy = "random"
    project.full_clean()
    project.save()
    _claims(project, 8)
    client = api(personas.annotator)
    first = _next(client, project, count=8)
    Lease.objects.all().delete()
    assert _next(client, project, count=8) == first
    assert set(queue.QUEUE_STRATEGIES) >= {"uncertainty", "random"}
    project.queue_strategy = "nonsense"
    with pytest.raises(ValidationError):
        project.full_clean()


def test_items_carry_claim_evidence_and_document_window(personas, api):
    project = personas.project
    document = make_document(project, text="x" * 1000 + "Toronto" + "y" * 1000)
    claim = make_claim(
        document,
        type="HearingDate",
        value={"yyyy": "2012", "mm": "1", "dd": "17"},
        **aligned(document, 1000, 1007, 0.9),
        score=0.7,
        verdict="safe",
    )
    sibling = make_claim(document)
    item = (
        api(personas.annotator)
        .get(f"/api/projects/{project.pk}/items/{claim.pk}/")
        .json()
    )
    assert item["hypothesis"] == "Hearing Date: 2012-01-17"
    assert item["value_display"] == "2012-01-17"
    assert item["document"]["window_start"] == 600
    assert item["document"]["window_text"] == "x" * 400 + "Toronto" + "y" * 400
    assert item["document"]["length"] == 2007
    assert item["premise"] == "Toronto" and item["evidence_score"] == 0.9
    assert item["evidence"] == [
        dict(
            source=document.external_id,
            start=1000,
            end=1007,
            text="Toronto",
            role="aligned",
            score=0.9,
        )
    ]
    assert {s["id"] for s in item["siblings"]} == {claim.pk, sibling.pk}
    assert "machine" not in item  # hidden so they do not anchor the expert
    project.show_machine_scores = True
    project.save()
    item = (
        api(personas.annotator)
        .get(f"/api/projects/{project.pk}/items/{claim.pk}/")
        .json()
    )
    assert item["machine"]["score"] == 0.7 and item["machine"]["verdict"] == "safe"


@pytest.mark.bad_input
@pytest.mark.parametrize("claim_id", [0, 2**63, 10**30])
def test_an_item_id_no_claim_can_have_is_not_found(personas, api, claim_id):
    project = personas.project
    response = api(personas.annotator).get(
        f"/api/projects/{project.pk}/items/{claim_id}/"
    )
    assert response.status_code == 404, response.content


@pytest.mark.parametrize(
    "method,path",
    [
        ("post", "queue/next/"),
        ("post", "labels/"),
        ("get", "labels/mine/"),
        ("get", "progress/"),
        ("delete", f"labels/{uuid.uuid4()}/"),
    ],
)
def test_outsiders_get_404_and_anonymous_users_nothing(personas, api, method, path):
    url = f"/api/projects/{personas.project.pk}/{path}"
    body = {"labels": [{"client_id": str(uuid.uuid4()), "claim": 1, "label": "safe"}]}
    assert getattr(api(), method)(url, body, format="json").status_code in (401, 403)
    response = getattr(api(personas.outsider), method)(url, body, format="json")
    assert response.status_code == 404
    assert (
        getattr(api(personas.admin), method)(url, body, format="json").status_code < 300
    )


def test_session_writes_need_the_csrf_token(personas):
    from django.test import Client

    (claim,) = _claims(personas.project, 1)
    client = Client(enforce_csrf_checks=True)
    client.force_login(personas.annotator)
    page = client.get(f"/projects/{personas.project.pk}/label/")
    assert page.status_code == 200
    url = f"/api/projects/{personas.project.pk}/labels/"
    body = {
        "labels": [
            {
                "client_id": str(uuid.uuid4()),
                "claim": claim.pk,
                "label": "safe",
            }
        ]
    }
    refused = client.post(url, body, content_type="application/json")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    token = client.cookies["csrftoken"].value
    accepted = client.post(
        url, body, content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert accepted.status_code == 200


def test_label_page_offers_the_schema_types_and_none_from_a_broken_schema(
    personas, client
):
    import json
    import re

    project = personas.project
    client.force_login(personas.annotator)

    def types() -> list[str]:
        html = client.get(f"/projects/{project.pk}/label/").content.decode()
        raw = re.search(r'id="label-data"[^>]*>(.*?)</script>', html, re.S)
        return json.loads(raw.group(1))["project"]["entity_types"]

    project.options["entity_schema"] = {
        "entity_types": {"Judge": {"description": "who decides"}, "City": {}}
    }
    project.save()
    assert types() == ["City", "Judge"]
    project.options["entity_schema"] = {"entity_types": "not a mapping"}
    project.save()
    assert types() == []


def test_label_page_embeds_the_first_batch_and_hides_others_projects(personas, client):
    (claim,) = _claims(personas.project, 1)
    client.force_login(personas.annotator)
    html = client.get(f"/projects/{personas.project.pk}/label/").content.decode()
    assert 'id="label-data"' in html and "js/label.js" in html
    assert f'"id": {claim.pk}' in html
    assert Lease.objects.filter(annotator=personas.annotator).count() == 1
    client.force_login(personas.outsider)
    assert client.get(f"/projects/{personas.project.pk}/label/").status_code == 404
    client.logout()
    response = client.get(f"/projects/{personas.project.pk}/label/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_annotators_log_in_on_the_login_page(personas, client):
    response = client.post(
        "/login/", {"username": "ann1", "password": "ann1-pass"}, follow=True
    )
    assert response.status_code == 200 and "asylum" in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_concurrent_hand_outs_on_two_connections_do_not_overlap(personas):
    """Two threads, each with its own database connection, ask at once."""
    project = personas.project
    _no_overlap(project)
    _claims(project, 30)
    barrier = threading.Barrier(2)
    results = {}

    def take(user):
        try:
            barrier.wait()
            got = []
            for _ in range(3):
                got += labels.labeling_next(
                    project=project, annotator=user, count=4, exclude=got
                )
            results[user.username] = got
        finally:
            connection.close()

    threads = [
        threading.Thread(target=take, args=(u,))
        for u in (personas.annotator, personas.annotator2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    a, b = results["ann1"], results["ann2"]
    assert len(a) == 12 and len(b) == 12
    assert not set(a) & set(b)


def _documents(project, n, *, gold):
    """``n`` documents inside (or outside) the gold set."""
    found = []
    while len(found) < n:
        document = make_document(project)
        if gold_set.is_gold_document(project, document.pk) == gold:
            found.append(document)
    return found


def test_gold_slice_comes_in_random_order_beside_the_strategy(personas, api):
    project = personas.project
    _no_overlap(project)
    project.gold_share = 0.3
    project.nli_threshold = 0.5
    project.save()
    # Gold claims sit nearest the threshold: the uncertainty order would
    # hand them out first if the gold slice were not drawn apart.
    gold = [make_claim(d, score=0.5) for d in _documents(project, 30, gold=True)]
    rest = [
        make_claim(d, score=0.5 + i / 100)
        for i, d in enumerate(_documents(project, 30, gold=False), start=1)
    ]
    # The hand-out draws its gold share with the random module: seeded, so
    # the 1-in-1,200 draw of no gold at all cannot fail the test.
    random.seed(3)
    first = _next(api(personas.annotator), project, count=20)
    gold_ids = {p.pk for p in gold}
    handed_gold = [pk for pk in first if pk in gold_ids]
    handed_rest = [pk for pk in first if pk not in gold_ids]
    # About 30% gold (binomial: 20 draws at 0.3).
    assert 0 < len(handed_gold) < 20
    # The rest in uncertainty order, from the nearest.
    assert handed_rest == [p.pk for p in rest[: len(handed_rest)]]
    # Gold in the stored random order, not the score order, from a random key
    # on: the next gold claims after the first one handed, wrapping round.
    keys = dict(Claim.objects.values_list("pk", "random_key"))
    by_key = sorted(gold_ids, key=keys.__getitem__)
    at = by_key.index(handed_gold[0])
    assert handed_gold == (by_key[at:] + by_key[:at])[: len(handed_gold)]


def test_each_gold_draw_starts_at_a_random_key(personas, api):
    """Not at the random order's start: there, every hand-out would pass the
    gold claims the other experts hold and hand out the lowest keys left."""
    project = personas.project
    _no_overlap(project)
    project.gold_share = 1.0
    project.save()
    gold = [make_claim(d) for d in _documents(project, 40, gold=True)]
    keys = dict(Claim.objects.values_list("pk", "random_key"))
    random.seed(5)
    client = api(personas.annotator)
    handed: list[int] = []
    for _ in range(6):
        handed += _next(client, project, count=1, exclude=handed)
    assert len(set(handed)) == 6
    assert handed != sorted((p.pk for p in gold), key=keys.__getitem__)[:6]


def test_gold_slice_fills_in_when_the_rest_runs_dry(personas, api):
    project = personas.project
    _no_overlap(project)
    project.gold_share = 0.1
    project.save()
    gold = [make_claim(d) for d in _documents(project, 5, gold=True)]
    assert sorted(_next(api(personas.annotator), project, count=10)) == sorted(
        p.pk for p in gold
    )


@pytest.mark.parametrize(
    "kind,order",
    [
        ("extraction", ["conflict", "borderline", "uncertain", "agreed"]),
        # Its evidence scores are no alignments: none is borderline.
        ("provenance", ["conflict", "uncertain", "borderline", "agreed"]),
    ],
)
def test_disagreement_strategy_hands_out_judges_in_conflict_first(
    personas, api, kind, order
):
    project = personas.project
    _no_overlap(project)
    project.kind = kind
    project.queue_strategy = "disagreement"
    project.nli_threshold = 0.5
    project.options = {"align_threshold": 0.6} if kind == "extraction" else {}
    project.full_clean()
    project.save()
    document = make_document(project)
    data = {"answer": "In Toronto.", "query": "Where?"} if kind == "provenance" else {}
    claim = partial(make_claim, document, **({"data": data} if data else {}))
    agreed = claim(score=0.95, evidence_score=0.95)
    uncertain = claim(score=0.55, evidence_score=0.95)
    borderline = claim(score=0.9, evidence_score=0.62)
    conflict = claim(score=0.9, evidence_score=0.95)
    ClaimScore.objects.create(claim=conflict, scorer="llm-grader:judge", score=0.0)
    ClaimScore.objects.create(claim=agreed, scorer="llm-grader:judge", score=1.0)
    ids = _next(api(personas.annotator), project, count=4)
    rows = dict(conflict=conflict, borderline=borderline, uncertain=uncertain)
    assert ids == [{**rows, "agreed": agreed}[name].pk for name in order]


def test_stratified_strategy_interleaves_types_and_models(personas, api):
    project = personas.project
    _no_overlap(project)
    project.queue_strategy = "stratified"
    project.full_clean()
    project.save()
    document = make_document(project)
    strata = {("GPE", "gpt"): 12, ("GPE", "llama"): 3, ("JudgeName", "gpt"): 3}
    for (type_, model), n in strata.items():
        for i in range(n):
            claim = make_claim(document, type=type_, model=model)
            # Evenly spread random keys make the interleaving exact.
            Claim.objects.filter(pk=claim.pk).update(random_key=(i + 0.5) / n)
    ids = _next(api(personas.annotator), project, count=9)
    rows = dict(
        (pk, (t, m))
        for pk, t, m in Claim.objects.values_list("pk", "data__type", "model")
    )
    # Three rounds of one from each stratum: the two small strata are used
    # up as fast as the big one, not at a quarter of its pace.
    for start in range(0, 9, 3):
        assert {rows[pk] for pk in ids[start : start + 3]} == set(strata)


def _item(client, project, claim):
    response = client.get(f"/api/projects/{project.pk}/items/{claim.pk}/")
    assert response.status_code == 200, response.content
    return response


# A score no other field holds, to look for in the whole payload.
HIDDEN_SCORE = 0.6180339


@pytest.mark.parametrize(
    "fields,code,why,found",
    [
        (
            dict(verdict="unscored", uncertainty=0.0),
            "unscored",
            "No scorer has judged this yet",
            True,
        ),
        (
            dict(verdict="unsafe", reason="not_in_document"),
            "not_in_document",
            "Flagged: not in document",
            False,
        ),
        (
            dict(verdict="unsafe", reason="not_supported", uncertainty=0.3),
            "not_supported",
            "Flagged: not supported",
            True,
        ),
        (
            dict(verdict="safe", uncertainty=0.05),
            "close_call",
            "A close call: its evidence may not support it",
            True,
        ),
        (
            dict(verdict="safe", uncertainty=0.4),
            "spot_check",
            "Spot check of an item judged safe",
            True,
        ),
        (dict(verdict=""), "unchecked", "Not checked yet", None),
        # A check that could not be made is not waiting for a scorer.
        (
            dict(verdict="unscored", reason="unverifiable", uncertainty=0.0),
            "unverifiable",
            "Unverifiable: its check could not be made",
            True,
        ),
    ],
)
def test_items_say_why_they_are_shown_without_the_hidden_score(
    personas, api, fields, code, why, found
):
    project = personas.project
    _no_overlap(project)
    document = make_document(project)
    claim = make_claim(
        document,
        **aligned(document, 26, 33, 0.8),
        score=None if fields["verdict"] in ("", "unscored") else HIDDEN_SCORE,
        **fields,
    )
    response = _item(api(personas.annotator), project, claim)
    item = response.json()
    assert item["why"] == {"code": code, "text": why}
    assert item["context_found"] is found
    assert "machine" not in item
    assert str(HIDDEN_SCORE) not in response.content.decode()
    # Where the project shows scores, the same words come beside them.
    project.show_machine_scores = True
    project.save(update_fields=["show_machine_scores"])
    item = _item(api(personas.annotator), project, claim).json()
    assert item["why"] == {"code": code, "text": why}
    assert item["machine"]["verdict_text"] == claim.verdict_text()


def test_a_gold_item_says_it_is_a_gold_check_whatever_the_machine_said(personas, api):
    project = personas.project
    _no_overlap(project)
    project.gold_share = 0.3
    project.save(update_fields=["gold_share"])
    [document] = _documents(project, 1, gold=True)
    claim = make_claim(document, verdict="unsafe", reason="not_in_document", score=None)
    item = _item(api(personas.annotator), project, claim).json()
    assert item["why"] == {
        "code": "gold",
        "text": "Gold check: drawn at random for the test set that measures the scorer",
    }
    # The evidence still says what it is.
    assert item["context_found"] is False


def _sentences(n):
    return " ".join(
        f"Ground {i}: the panel considered the appellant's submission carefully."
        for i in range(n)
    )


def test_document_window_is_cut_at_word_boundaries_around_the_evidence(personas, api):
    project = personas.project
    text = _sentences(60)
    document = make_document(project, text=text)
    start = text.index("Ground 30:")
    end = start + len("Ground 30: the panel")
    claim = make_claim(document, **aligned(document, start, end))
    item = _item(api(personas.annotator), project, claim).json()
    window = item["document"]
    at, shown = window["window_start"], window["window_text"]
    assert text[at : at + len(shown)] == shown
    assert at <= start and at + len(shown) >= end
    # Never mid-word: the window starts after a space and ends before one,
    # each within a few characters of the nominal 400 on either side.
    assert text[at - 1] == " " and not shown[0].isspace()
    assert text[at + len(shown)] == " " and not shown[-1].isspace()
    assert abs(at - (start - 400)) <= 80
    assert abs(at + len(shown) - (end + 400)) <= 80


def test_document_window_prefers_a_line_break_to_a_word_break(personas, api):
    project = personas.project
    text = _sentences(60)
    cut = text.index(" ", 1400)
    text = text[:cut] + "\n" + text[cut + 1 :]
    document = make_document(project, text=text)
    # The window would start 30 characters before the line, nearer other words.
    start = cut + 1 - 30 + 400
    claim = make_claim(document, **aligned(document, start, start + 10))
    item = _item(api(personas.annotator), project, claim).json()
    assert item["document"]["window_start"] == cut + 1
    # A document that fits whole is shown whole, as it is.
    short = make_document(project, text="  Short text, ends in a space. ")
    claim = make_claim(short, **aligned(short, 2, 7))
    item = _item(api(personas.annotator), project, claim).json()
    assert item["document"]["window_start"] == 0
    assert item["document"]["window_text"] == short.text
