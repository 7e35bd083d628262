"""The queue state Postgres keeps on each claim (the initial migration's
triggers): its decisive label count and whether it still needs labels,
whatever path the labels take."""

import threading
import time
import uuid

import pytest
from django.db import connection, transaction

from annotator.labeling import queue
from annotator.models import Claim, Label
from tests.annotator.factories import make_claim, make_document

pytestmark = pytest.mark.django_db


def _state(claim):
    claim.refresh_from_db(fields=["decisive_labels", "queue_open"])
    return claim.decisive_labels, claim.queue_open


def _one_label_each(project):
    project.overlap_share = 0.0
    project.save(update_fields=["overlap_share"])


@pytest.mark.parametrize("share", [0.0, 0.1, 0.37, 1.0])
def test_sql_labels_needed_agrees_with_python_overlap(personas, share):
    project = personas.project
    project.overlap_share = share
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, annotator_labels_needed(id, %s, 3) "
            "FROM generate_series(1, 5000) AS id",
            [share],
        )
        needed = dict(cursor.fetchall())
    assert needed == {
        pk: 3 if queue.is_overlap(project, pk) else 1 for pk in range(1, 5001)
    }


def test_state_follows_labels_from_the_page_imports_and_deletes(personas, api):
    project = personas.project
    _one_label_each(project)
    claim = make_claim(make_document(project))
    assert _state(claim) == (0, True)

    client = api(personas.annotator)
    url = f"/api/projects/{project.pk}/labels/"

    def label(value):
        body = {
            "labels": [
                {
                    "client_id": str(uuid.uuid4()),
                    "claim": claim.pk,
                    "label": value,
                }
            ]
        }
        assert client.post(url, body, format="json").status_code == 200

    label("unsafe")
    assert _state(claim) == (1, False)
    label("unsure")  # a changed decision: not decisive any more
    assert _state(claim) == (0, True)
    Label.objects.bulk_create(
        [Label(claim=claim, annotator=personas.annotator2, label="safe")]
    )
    assert _state(claim) == (1, False)
    Label.objects.filter(annotator=personas.annotator2).delete()
    assert _state(claim) == (0, True)


def test_a_stale_full_save_cannot_overwrite_the_count(personas):
    project = personas.project
    _one_label_each(project)
    claim = make_claim(make_document(project))
    stale = Claim.objects.get(pk=claim.pk)
    Label.objects.create(claim=claim, annotator=personas.annotator, label="safe")
    stale.verdict = "unsafe"
    stale.save()  # writes decisive_labels=0, queue_open=True as it loaded them
    assert _state(claim) == (1, False)


def test_overlap_settings_change_reopens_or_closes_labelled_claims(personas):
    project = personas.project
    project.overlap_share, project.overlap_labels = 1.0, 2
    project.save()
    claim = make_claim(make_document(project))
    Label.objects.create(claim=claim, annotator=personas.annotator, label="safe")
    assert _state(claim) == (1, True)  # waits for its second expert
    project.overlap_share = 0.0
    project.save()
    assert _state(claim) == (1, False)
    project.overlap_share = 1.0
    project.save()
    assert _state(claim) == (1, True)


@pytest.mark.django_db(transaction=True)
def test_two_experts_labelling_one_claim_at_once_are_both_counted(personas):
    """The second writer waits for the first's lock on the claim, then
    recounts with the first's label committed: neither label is lost."""
    project = personas.project
    project.overlap_share, project.overlap_labels = 1.0, 2
    project.save()
    claim = make_claim(make_document(project))
    first_written, commit_first = threading.Event(), threading.Event()
    errors = []

    def label(user, *, hold):
        try:
            with transaction.atomic():
                Label.objects.create(claim=claim, annotator=user, label="safe")
                if hold:
                    first_written.set()
                    commit_first.wait(10)
        except Exception as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)
        finally:
            connection.close()

    first = threading.Thread(
        target=label, args=(personas.annotator,), kwargs={"hold": True}
    )
    second = threading.Thread(
        target=label, args=(personas.annotator2,), kwargs={"hold": False}
    )
    first.start()
    assert first_written.wait(10)
    second.start()
    time.sleep(0.3)  # the second blocks on the claim row the first holds
    assert second.is_alive()
    commit_first.set()
    first.join(10)
    second.join(10)
    assert not errors
    assert _state(claim) == (2, False)
