"""Webhooks: every kind of run's end reaches a real HTTP receiver, signed;
a failing receiver is retried with backoff and the log says so; the URL is
held to the deployment's allow-list and the secret is shown once."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.utils import timezone

from annotator import (
    consistency_runs,
    extraction,
    grading,
    ingest,
    tasks,
    training,
    webhooks,
)
from annotator.models import RunStatus, Webhook, WebhookDelivery
from tests.annotator.factories import make_document, make_prediction, make_project
from tests.conftest import wait_for
from tests.consistency_data import LAMPORT

pytestmark = pytest.mark.django_db

MODEL = "fake-model"
PRICES = {"price_per_mtok_prompt": 1.0, "price_per_mtok_completion": 2.0}


# --- a webhook receiver ------------------------------------------------------


@dataclass
class Call:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float

    @property
    def json(self) -> dict:
        return json.loads(self.body)


class Receiver:
    """A threaded HTTP server on 127.0.0.1 recording every POST; each path
    answers its scripted statuses in turn, then 200."""

    def __init__(self):
        self.calls: list[Call] = []
        self._script: dict[str, deque] = defaultdict(deque)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), daemon=True
        )
        self._thread.start()

    def url(self, path: str = "/hook") -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{path}"

    def answer(self, path: str, *statuses: int, location: str = "") -> None:
        self._script[path].extend((s, location) for s in statuses)

    def to(self, path: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.path == path]

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _handler(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                with receiver._lock:
                    receiver.calls.append(Call(self.path, headers, body, time.time()))
                    script = receiver._script[self.path]
                    status, location = script.popleft() if script else (200, "")
                self.send_response(status)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        return Handler


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.stop()


def verified(call: Call, secret: str) -> dict:
    """The README's recipe: the call's JSON body, once its signature checks."""
    timestamp = call.headers["x-safepassage-timestamp"]
    expected = hmac.new(
        secret.encode(), f"{timestamp}.".encode() + call.body, hashlib.sha256
    ).hexdigest()
    signature = call.headers["x-safepassage-signature"]
    assert hmac.compare_digest(signature, f"sha256={expected}"), "bad signature"
    assert abs(time.time() - int(timestamp)) < 300
    return call.json


def register(api, user, project, url, **fields):
    response = api(user).post(
        "/api/webhooks/", {"project": project.pk, "url": url, **fields}, format="json"
    )
    assert response.status_code == 201, response.content
    return response.json()


def deliver_pending() -> None:
    """Run the delivery tasks in this process (the test's transaction never
    commits, so none was sent to a broker)."""
    pending = WebhookDelivery.objects.filter(status=WebhookDelivery.Status.PENDING)
    for pk in pending.values_list("pk", flat=True):
        tasks.deliver_webhook.apply(args=[pk])


def the_one_call(receiver, hook, event) -> dict:
    calls = receiver.to("/hook")
    assert len(calls) == 1, calls
    call = calls[0]
    assert call.headers["x-safepassage-event"] == event
    assert call.headers["content-type"] == "application/json"
    delivery = WebhookDelivery.objects.get()
    assert call.headers["x-safepassage-delivery"] == str(delivery.pk)
    assert (delivery.status, delivery.attempts, delivery.response_status) == (
        WebhookDelivery.Status.DELIVERED,
        1,
        200,
    )
    payload = verified(call, hook["secret"])
    assert payload == delivery.payload
    assert (payload["event"], payload["project"]) == (event, hook["project"])
    return payload


# --- every kind of run ----------------------------------------------------------


def test_an_extraction_run_end_is_one_signed_call(personas, api, receiver, fake_openai):
    project = make_project(llm_base_url=fake_openai.base_url, llm_models=[MODEL])
    hook = register(api, personas.admin, project, receiver.url())
    make_document(project, external_id="d1")
    fake_openai.reply_json(
        {
            "entities": [
                {
                    "type": "GPE",
                    "value": "Toronto",
                    "raw": None,
                    "context": "in Toronto",
                }
            ]
        }
    )
    run = extraction.extraction_run_start(project=project, model=MODEL)
    assert tasks.run_extraction(run.pk)["status"] == RunStatus.SUCCEEDED
    assert receiver.calls == []  # sent by a task once the run's end commits

    deliver_pending()
    payload = the_one_call(receiver, hook, "extraction")
    assert payload["run"] == run.pk and payload["status"] == "succeeded"
    assert payload["progress"] == {"done": 1, "total": 1}
    assert payload["finished_at"] and payload["error"] == ""
    # Running the task again finds the run ended: no second call.
    tasks.run_extraction(run.pk)
    deliver_pending()
    assert len(receiver.calls) == 1


def test_a_grading_run_end_is_one_signed_call(personas, api, receiver, fake_openai):
    fake_openai.responder = lambda body: {"reasoning": "says so", "label": "SUPPORTS"}
    project = make_project(
        llm_base_url=fake_openai.base_url, llm_models=[MODEL], gold_share=0.0
    )
    hook = register(api, personas.admin, project, receiver.url(), events=["grading"])
    make_prediction(
        make_document(project),
        verdict="safe",
        hypothesis="GPE: Toronto",
        premise="took place in Toronto",
        evidence_score=1.0,
    )
    run = grading.grading_run_start(
        project=project, model=MODEL, budget="1", params=dict(PRICES)
    )
    assert tasks.run_grading(run.pk)["status"] == RunStatus.SUCCEEDED

    deliver_pending()
    payload = the_one_call(receiver, hook, "grading")
    assert (payload["run"], payload["status"]) == (run.pk, "succeeded")
    assert payload["progress"] == {"done": 1, "total": 1}
    assert payload["model"] == MODEL and payload["cost"] == "0.000020"


def test_a_consistency_run_end_is_one_signed_call(personas, api, receiver, fake_openai):
    project = make_project(
        kind="consistency",
        entity_schema={},
        llm_base_url=fake_openai.base_url,
        llm_models=["sampler-a"],
    )
    hook = register(api, personas.admin, project, receiver.url())
    item = {k: v for k, v in LAMPORT.items() if k != "samples"}
    ingest.documents_import(
        project=project,
        files=[("a.jsonl", ingest.stream_of(json.dumps({**item, "id": "a"}) + "\n"))],
    )
    run = consistency_runs.consistency_run_start(
        project=project, budget="1", params={"samplers": ["sampler-a"], **PRICES}
    )
    consistency_runs.consistency_run_cancel(run=run)

    deliver_pending()
    payload = the_one_call(receiver, hook, "consistency")
    assert (payload["run"], payload["status"]) == (run.pk, "cancelled")
    assert payload["job"] == "samples"


def test_a_training_run_end_is_one_signed_call_however_it_ends(personas, api, receiver):
    project = personas.project
    hook = register(api, personas.admin, project, receiver.url())
    cancelled = training.training_run_start(project=project, enqueue=False)
    training.training_run_cancel(run=cancelled)  # pending: ends at once
    deliver_pending()
    payload = the_one_call(receiver, hook, "training")
    assert (payload["run"], payload["status"]) == (cancelled.pk, "cancelled")

    WebhookDelivery.objects.all().delete()
    receiver.calls.clear()
    failed = training.training_run_start(project=project, enqueue=False)
    assert training.training_run_fail(run_id=failed.pk, error="the worker died")
    assert not training.training_run_fail(run_id=failed.pk, error="again")
    deliver_pending()
    payload = the_one_call(receiver, hook, "training")
    assert (payload["run"], payload["status"]) == (failed.pk, "failed")
    assert payload["error"].startswith("the worker died")
    assert payload["progress"]["fraction"] == 0.0


def test_a_check_end_is_one_signed_call_to_the_webhooks_wanting_it(
    personas, api, receiver
):
    project = personas.project
    hook = register(api, personas.admin, project, receiver.url(), events=["check"])
    register(api, personas.admin, project, receiver.url("/grading"), events=["grading"])
    paused = register(api, personas.admin, project, receiver.url("/paused"))
    api(personas.admin).patch(
        f"/api/webhooks/{paused['id']}/", {"is_active": False}, format="json"
    )
    document = make_document(project)
    make_prediction(document)
    make_prediction(document, value="Ottawa", context="went to Ottawa")

    result = tasks.check_predictions(project.pk)
    assert result["checked"] == 2
    deliver_pending()
    payload = the_one_call(receiver, hook, "check")
    assert payload["checked"] == 2 and payload["remaining"] == 0
    assert payload["safe"] + payload["unsafe"] + payload["unscored"] == 2
    assert receiver.to("/grading") == [] and receiver.to("/paused") == []
    # A second check finds nothing to do, and tells nobody.
    assert tasks.check_predictions(project.pk)["checked"] == 0
    assert WebhookDelivery.objects.count() == 1


# --- retries, through a real worker ---------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_failing_receiver_is_retried_with_backoff_and_logged(
    personas, api, receiver, celery_worker
):
    """The worker (WEBHOOK_RETRY_BACKOFF=0.5, WEBHOOK_MAX_ATTEMPTS=5 from the
    tests' environment) calls one receiver until its third answer is a 200,
    and gives up on one that always answers 500 after five calls."""
    project = personas.project
    admin = api(personas.admin)
    flaky = register(api, personas.admin, project, receiver.url("/flaky"))
    broken = register(api, personas.admin, project, receiver.url("/broken"))
    receiver.answer("/flaky", 500, 503)
    receiver.answer("/broken", *[500] * 10)
    run = training.training_run_start(project=project, enqueue=False)
    response = admin.post(f"/api/training-runs/{run.pk}/cancel/")
    assert response.json()["status"] == "cancelled"

    def log(hook):
        response = admin.get(f"/api/webhooks/{hook['id']}/deliveries/")
        assert response.status_code == 200
        results = response.json()["results"]
        return results if results and results[0]["status"] != "pending" else None

    flaky_log = wait_for(lambda: log(flaky), timeout=30, worker=celery_worker)
    assert len(flaky_log) == 1
    delivered = flaky_log[0]
    assert (delivered["status"], delivered["attempts"]) == ("delivered", 3)
    assert delivered["response_status"] == 200 and delivered["error"] == ""
    calls = receiver.to("/flaky")
    assert len(calls) == 3
    assert {c.headers["x-safepassage-delivery"] for c in calls} == {
        str(delivered["id"])
    }
    for call in calls:  # each call signed afresh, the body the same
        assert verified(call, flaky["secret"])["run"] == run.pk
    # Celery's countdown doubles: 0.5 s, then 1 s.
    gaps = [b.at - a.at for a, b in zip(calls, calls[1:], strict=False)]
    assert gaps[0] >= 0.45 and gaps[1] >= 0.95, gaps

    broken_log = wait_for(lambda: log(broken), timeout=60, worker=celery_worker)
    failed = broken_log[0]
    assert (failed["status"], failed["attempts"]) == ("failed", 5)
    assert failed["response_status"] == 500
    assert failed["error"].startswith("gave up after 5 calls: HTTP 500")
    assert len(receiver.to("/broken")) == 5
    # The run is untouched by its webhooks' troubles.
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED


def test_a_retry_waits_longer_each_time_and_stops_at_the_limit(
    personas, api, receiver, settings
):
    settings.WEBHOOK_MAX_ATTEMPTS = 3
    settings.WEBHOOK_RETRY_BACKOFF = 10
    hook = register(api, personas.admin, personas.project, receiver.url())
    receiver.answer("/hook", 500, 500, 500)
    (delivery_id,) = webhooks.webhooks_notify(personas.project, "check", {"n": 1})
    assert webhooks.webhook_deliver(delivery_id=delivery_id) == 10
    assert webhooks.webhook_deliver(delivery_id=delivery_id) == 20
    assert webhooks.webhook_deliver(delivery_id=delivery_id) is None
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("failed", 3)
    assert delivery.last_attempt_at is not None
    assert webhooks.webhook_deliver(delivery_id=delivery_id) is None  # ended
    assert len(receiver.calls) == 3
    verified(receiver.calls[0], hook["secret"])


def test_a_redirect_is_not_followed_and_a_dead_receiver_is_an_error(
    personas, api, receiver
):
    register(api, personas.admin, personas.project, receiver.url())
    receiver.answer("/hook", 302, location=receiver.url("/elsewhere"))
    (delivery_id,) = webhooks.webhooks_notify(personas.project, "check", {})
    assert webhooks.webhook_deliver(delivery_id=delivery_id) is not None
    delivery = WebhookDelivery.objects.get()
    assert delivery.response_status == 302
    assert "redirects are not followed" in delivery.error
    assert receiver.to("/elsewhere") == []

    receiver.stop()  # nothing listens there any more
    assert webhooks.webhook_deliver(delivery_id=delivery_id) is not None
    delivery.refresh_from_db()
    assert delivery.attempts == 2 and delivery.response_status is None
    assert "Connection refused" in delivery.error, delivery.error


def test_a_host_dropped_from_the_list_is_never_called_and_the_run_still_ends(
    personas, api, receiver, settings
):
    register(api, personas.admin, personas.project, receiver.url())
    settings.WEBHOOK_ALLOWED_HOSTS = ["hooks.example.org"]
    run = training.training_run_start(project=personas.project, enqueue=False)
    assert training.training_run_cancel(run=run).status == RunStatus.CANCELLED
    deliver_pending()
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == "failed" and delivery.attempts == 0
    assert "WEBHOOK_ALLOWED_HOSTS" in delivery.error
    assert receiver.calls == []


# --- registration --------------------------------------------------------------


@pytest.mark.parametrize(
    "allowed, url, message",
    [
        (
            ["127.0.0.1"],
            "http://10.0.0.1/hook",
            "host '10.0.0.1' is not allowed here; the deployment allows "
            "127.0.0.1 (WEBHOOK_ALLOWED_HOSTS)",
        ),
        (["127.0.0.1:9"], "http://127.0.0.1:8080/", "'127.0.0.1:8080' is not allowed"),
        (["127.0.0.1"], "http://u:p@169.254.169.254/", "'169.254.169.254' is not"),
        (["127.0.0.1"], "ftp://127.0.0.1/hook", "http or https, not 'ftp'"),
        (["127.0.0.1"], "file:///etc/passwd", "http or https, not 'file'"),
        (["127.0.0.1"], "http://127.0.0.1/a b", "spaces or control characters"),
        (["127.0.0.1"], "http:///hook", "has no host"),
        ([], "http://127.0.0.1/hook", "WEBHOOK_ALLOWED_HOSTS is empty"),
    ],
)
def test_a_url_the_deployment_does_not_allow_is_refused_by_name(
    personas, api, settings, allowed, url, message
):
    settings.WEBHOOK_ALLOWED_HOSTS = allowed
    response = api(personas.admin).post(
        "/api/webhooks/", {"project": personas.project.pk, "url": url}, format="json"
    )
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert message in detail, detail
    assert not Webhook.objects.exists()


def test_a_host_with_a_port_in_the_list_allows_that_port(personas, api, settings):
    settings.WEBHOOK_ALLOWED_HOSTS = ["hooks.example.org:8443", "ci"]
    for url in ("https://hooks.example.org:8443/x", "http://CI:8080/done"):
        register(api, personas.admin, personas.project, url)
    assert Webhook.objects.count() == 2


def test_unknown_events_are_refused_and_events_can_be_changed(personas, api, receiver):
    admin = api(personas.admin)
    body = {"project": personas.project.pk, "url": receiver.url(), "events": ["x"]}
    response = admin.post("/api/webhooks/", body, format="json")
    assert response.status_code == 400
    assert "unknown events 'x'" in response.json()["detail"]
    assert (
        "check, extraction, grading, training, consistency"
        in (response.json()["detail"])
    )
    hook = register(api, personas.admin, personas.project, receiver.url())
    assert hook["events"] == [] and hook["is_active"]
    url = f"/api/webhooks/{hook['id']}/"
    changed = admin.patch(url, {"events": ["training", "check"]}, format="json")
    assert changed.status_code == 200
    assert changed.json()["events"] == ["check", "training"]
    refused = admin.patch(url, {"events": ["nope"]}, format="json")
    assert refused.status_code == 400
    ignored = admin.patch(url, {"url": "http://10.0.0.1/"}, format="json")
    assert ignored.json()["url"] == receiver.url()  # read-only
    assert Webhook.objects.get().events == ["check", "training"]


def test_the_secret_is_shown_once_and_signs_the_calls(personas, api, receiver):
    admin = api(personas.admin)
    hook = register(api, personas.admin, personas.project, receiver.url())
    secret = hook["secret"]
    assert len(secret) == 64 and int(secret, 16) >= 0
    listed = admin.get("/api/webhooks/", {"project": personas.project.pk}).json()
    assert [h["id"] for h in listed["results"]] == [hook["id"]]
    assert "secret" not in listed["results"][0]
    detail = admin.get(f"/api/webhooks/{hook['id']}/").json()
    assert "secret" not in detail and secret not in json.dumps(detail)
    another = register(api, personas.admin, personas.project, receiver.url("/2"))
    assert another["secret"] != secret

    webhooks.webhooks_notify(personas.project, "check", {"checked": 1})
    deliver_pending()
    (call,) = receiver.to("/hook")
    assert verified(call, secret)["checked"] == 1
    with pytest.raises(AssertionError, match="bad signature"):
        verified(call, another["secret"])
    log = admin.get(f"/api/webhooks/{hook['id']}/deliveries/").json()
    assert log["count"] == 1 and secret not in json.dumps(log)


def test_only_the_projects_admins_manage_its_webhooks(personas, api, receiver):
    hook = register(api, personas.admin, personas.project, receiver.url())
    for user in (personas.annotator, personas.outsider):
        client = api(user)
        body = {"project": personas.project.pk, "url": receiver.url()}
        created = client.post("/api/webhooks/", body, format="json")
        assert created.status_code in (400, 403), created.content
        assert client.get("/api/webhooks/").json()["results"] == []
        url = f"/api/webhooks/{hook['id']}/"
        assert client.get(url).status_code == 404
        assert client.get(url + "deliveries/").status_code == 404
        assert client.patch(url, {"is_active": False}, format="json").status_code == 404
        assert client.delete(url).status_code == 404
    refused = api(personas.annotator).post(
        "/api/webhooks/",
        {"project": personas.project.pk, "url": receiver.url()},
        format="json",
    )
    assert refused.status_code == 403
    assert "admin" in refused.json()["detail"]
    assert Webhook.objects.count() == 1
    assert api(personas.admin).delete(f"/api/webhooks/{hook['id']}/").status_code == 204
    assert not Webhook.objects.exists()


def test_the_schema_lists_webhooks_and_their_log(personas, api):
    paths = api(personas.admin).get("/api/schema/?format=json").json()["paths"]
    assert "/api/webhooks/" in paths and "/api/webhooks/{id}/deliveries/" in paths


def test_a_delivery_whose_message_was_lost_is_sent_again_by_the_sweep(
    personas, api, receiver, unread_broker
):
    hook = register(api, personas.admin, personas.project, receiver.url())
    [pk] = webhooks.webhooks_notify(personas.project, "check", {"checked": 1})
    # Its message never reached a worker (the test's transaction never
    # commits); fresh, it is not taken for lost.
    assert webhooks.deliveries_lost() == []
    long_ago = timezone.now() - timedelta(seconds=webhooks.LOST_AFTER_SECONDS + 5)
    WebhookDelivery.objects.filter(pk=pk).update(created_at=long_ago)
    assert webhooks.deliveries_lost() == [pk]
    assert tasks.sweep_llm_runs()["WebhookDelivery"] == {"resent": [pk]}
    # One that just failed a call waits its backoff: not lost.
    WebhookDelivery.objects.filter(pk=pk).update(
        attempts=3, last_attempt_at=timezone.now()
    )
    assert webhooks.deliveries_lost() == []
    deliver_pending()
    assert verified(receiver.to("/hook")[0], hook["secret"])["checked"] == 1
