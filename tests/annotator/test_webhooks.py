"""Webhooks: every kind of run's end reaches a real HTTP receiver, signed;
a failing receiver is retried with backoff and the log says so; the URL is
held to the deployment's allow-list and the secret is shown once."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import socket
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass
from datetime import timedelta
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.db import OperationalError, connection, transaction
from django.utils import timezone

from annotator import tasks
from annotator.claims import ingest
from annotator.kinds.consistency import consistency_runs
from annotator.kinds.extraction import extraction_runs
from annotator.kinds.extraction import tasks as extraction_tasks
from annotator.models import Membership, Role, RunStatus, Webhook, WebhookDelivery
from annotator.projects import webhooks
from annotator.runs import grading
from annotator.training import runs as training_runs
from tests.annotator.factories import make_claim, make_document, make_project
from tests.conftest import ROOT, wait_for
from tests.consistency_data import LAMPORT

pytestmark = pytest.mark.django_db

MODEL = "fake-model"


# --- a webhook receiver ------------------------------------------------------


@dataclass
class Call:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float
    message: Message  # the headers as sent, looked up in any case

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

    def answer(
        self, path: str, *statuses: int, location: str = "", body: bytes = b"ok"
    ) -> None:
        self._script[path].extend((s, location, body) for s in statuses)

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
                call = Call(self.path, headers, body, time.time(), self.headers)
                with receiver._lock:
                    receiver.calls.append(call)
                    script = receiver._script[self.path]
                    status, location, answer = (
                        script.popleft() if script else (200, "", b"ok")
                    )
                self.send_response(status)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        return Handler


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.stop()


def readme_verify():
    """The manual's ``verify`` for receivers, as written there."""
    text = (ROOT / "docs" / "web-app.md").read_text(encoding="utf-8")
    [block] = [
        b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "def verify(" in b
    ]
    namespace: dict = {}
    exec(block, namespace)
    return namespace["verify"]


def verified(call: Call, secret: str) -> dict:
    """The call's JSON body, once the manual's recipe accepts its signature."""
    assert readme_verify()(secret, call.message, call.body), "bad signature"
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
    run = extraction_runs.extraction_run_start(project=project, model=MODEL)
    assert extraction_tasks.run_extraction(run.pk)["status"] == RunStatus.SUCCEEDED
    assert receiver.calls == []  # sent by a task once the run's end commits

    deliver_pending()
    payload = the_one_call(receiver, hook, "extraction")
    assert payload["run"] == run.pk and payload["status"] == "succeeded"
    assert payload["progress"] == {"done": 1, "total": 1}
    assert payload["finished_at"] and payload["error"] == ""
    # Running the task again finds the run ended: no second call.
    extraction_tasks.run_extraction(run.pk)
    deliver_pending()
    assert len(receiver.calls) == 1


def test_a_grading_run_end_is_one_signed_call(personas, api, receiver, fake_openai):
    fake_openai.responder = lambda body: {"reasoning": "says so", "label": "SUPPORTS"}
    project = make_project(
        llm_base_url=fake_openai.base_url, llm_models=[MODEL], gold_share=0.0
    )
    hook = register(api, personas.admin, project, receiver.url(), events=["grading"])
    make_claim(
        make_document(project),
        verdict="safe",
        hypothesis="GPE: Toronto",
        premise="took place in Toronto",
        evidence_score=1.0,
        checked_at=None,
    )
    run = grading.grading_run_start(project=project, model=MODEL, budget="1")
    assert tasks.run_grading(run.pk)["status"] == RunStatus.SUCCEEDED

    deliver_pending()
    payload = the_one_call(receiver, hook, "grading")
    assert (payload["run"], payload["status"]) == (run.pk, "succeeded")
    assert payload["progress"] == {"done": 1, "total": 1}
    assert payload["model"] == MODEL and payload["cost"] == "0.000020"


def test_a_consistency_run_end_is_one_signed_call(personas, api, receiver, fake_openai):
    project = make_project(
        kind="consistency",
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
        project=project, budget="1", params={"samplers": ["sampler-a"]}
    )
    consistency_runs.consistency_run_cancel(run=run)

    deliver_pending()
    payload = the_one_call(receiver, hook, "consistency")
    assert (payload["run"], payload["status"]) == (run.pk, "cancelled")
    assert payload["job"] == "samples"


def test_a_training_run_end_is_one_signed_call_however_it_ends(personas, api, receiver):
    project = personas.project
    hook = register(api, personas.admin, project, receiver.url())
    cancelled = training_runs.training_run_start(project=project, enqueue=False)
    training_runs.training_run_cancel(run=cancelled)  # pending: ends at once
    deliver_pending()
    payload = the_one_call(receiver, hook, "training")
    assert (payload["run"], payload["status"]) == (cancelled.pk, "cancelled")

    WebhookDelivery.objects.all().delete()
    receiver.calls.clear()
    failed = training_runs.training_run_start(project=project, enqueue=False)
    assert training_runs.training_run_fail(run_id=failed.pk, error="the worker died")
    assert not training_runs.training_run_fail(run_id=failed.pk, error="again")
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
    make_claim(document, checked_at=None)
    make_claim(document, value="Ottawa", context="went to Ottawa", checked_at=None)

    result = tasks.check_claims(project.pk)
    assert result["checked"] == 2
    deliver_pending()
    payload = the_one_call(receiver, hook, "check")
    assert payload["checked"] == 2 and payload["remaining"] == 0
    assert payload["safe"] + payload["unsafe"] + payload["unscored"] == 2
    assert receiver.to("/grading") == [] and receiver.to("/paused") == []
    # A second check finds nothing to do, and tells nobody.
    assert tasks.check_claims(project.pk)["checked"] == 0
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
    run = training_runs.training_run_start(project=project, enqueue=False)
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
    run = training_runs.training_run_start(project=personas.project, enqueue=False)
    assert training_runs.training_run_cancel(run=run).status == RunStatus.CANCELLED
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
    for url in ("https://hooks.example.org:8443/x", "http://CI/done"):
        register(api, personas.admin, personas.project, url)
    assert Webhook.objects.count() == 2


def test_unknown_events_are_refused_and_events_can_be_changed(personas, api, receiver):
    admin = api(personas.admin)
    body = {"project": personas.project.pk, "url": receiver.url(), "events": ["x"]}
    response = admin.post("/api/webhooks/", body, format="json")
    assert response.status_code == 400
    assert "unknown events 'x'" in response.json()["detail"]
    assert (
        "check, consistency, extraction, grading, statements, training"
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


# --- hardening (issue 27) --------------------------------------------------------


class DrippingReceiver:
    """Reads a call, then answers one byte a second: each read of the answer
    waits well under any per-read timeout, so only a deadline on the whole
    call ends it. While the call is open it tries to lock the delivery and
    the webhook rows from a connection of its own (``locks``)."""

    def __init__(self, *, delivery_id: int, webhook_id: int):
        self.delivery_id, self.webhook_id = delivery_id, webhook_id
        self.locks: list[str] = []
        self.bytes_sent = 0
        self.closed_at: float | None = None
        self._server = socket.create_server(("127.0.0.1", 0))
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.getsockname()[1]}/hook"

    def _lock_rows(self) -> None:
        try:
            with transaction.atomic():
                WebhookDelivery.objects.select_for_update(nowait=True).get(
                    pk=self.delivery_id
                )
                Webhook.objects.select_for_update(nowait=True).get(pk=self.webhook_id)
                Webhook.objects.filter(pk=self.webhook_id).update(events=[])
            self.locks.append("free")
        except OperationalError as e:
            self.locks.append(f"locked: {e}")
        finally:
            connection.close()

    def _serve(self) -> None:
        conn, _ = self._server.accept()
        with conn:
            conn.recv(65536)  # the call's headers and body
            self._lock_rows()
            try:
                for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"x" * 60:
                    conn.sendall(bytes([byte]))
                    self.bytes_sent += 1
                    time.sleep(1)
            except OSError:
                self.closed_at = time.monotonic()  # the caller hung up

    def stop(self) -> None:
        self._server.close()


@pytest.mark.fault
@pytest.mark.django_db(transaction=True)
def test_a_dripping_receiver_is_cut_off_at_one_deadline_with_no_row_locked(
    personas, api, settings, unread_broker
):
    settings.WEBHOOK_TIMEOUT_SECONDS = 2
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    # Registered on a placeholder URL, then pointed at the receiver, which
    # needs the ids of the rows it tries to lock.
    hook = register(api, personas.admin, personas.project, "http://127.0.0.1:9/x")
    [delivery_id] = webhooks.webhooks_notify(personas.project, "check", {})
    receiver = DrippingReceiver(delivery_id=delivery_id, webhook_id=hook["id"])
    Webhook.objects.filter(pk=hook["id"]).update(url=receiver.url())
    try:
        started = time.monotonic()
        tasks.deliver_webhook.apply(args=[delivery_id])
        elapsed = time.monotonic() - started
    finally:
        receiver.stop()
    # One deadline for the whole call: a per-read timeout would have waited
    # out the 77 bytes (a minute and more).
    assert elapsed < 4, elapsed
    assert receiver.bytes_sent <= 4
    delivery = WebhookDelivery.objects.get(pk=delivery_id)
    assert (delivery.status, delivery.attempts) == ("failed", 1)
    assert delivery.response_status is None
    assert "no answer within 2 s (WEBHOOK_TIMEOUT_SECONDS)" in delivery.error
    # During the call, another connection locked and changed both rows.
    assert receiver.locks == ["free"]
    # The task itself has a time limit past the call's deadline.
    task = tasks.deliver_webhook
    assert settings.WEBHOOK_TIMEOUT_SECONDS < task.soft_time_limit < task.time_limit


def test_an_entry_with_a_port_allows_that_port_alone(personas, api, settings):
    first, second = Receiver(), Receiver()
    try:
        port = first.url().split(":")[2].split("/")[0]
        settings.WEBHOOK_ALLOWED_HOSTS = [f"127.0.0.1:{port}"]
        hook = register(api, personas.admin, personas.project, first.url())
        admin = api(personas.admin)
        body = {"project": personas.project.pk, "url": second.url()}
        refused = admin.post("/api/webhooks/", body, format="json")
        assert refused.status_code == 400
        assert "is not allowed here" in refused.json()["detail"]
        # A bare host allows its scheme's default port alone, not every port.
        settings.WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
        refused = admin.post("/api/webhooks/", body, format="json")
        assert refused.status_code == 400
        register(api, personas.admin, personas.project, "http://127.0.0.1/hook")
        register(api, personas.admin, personas.project, "https://127.0.0.1/hook")
        assert Webhook.objects.count() == 3

        # The list is checked again before each call: the first receiver's
        # port is no longer listed, so nothing is sent to it.
        Webhook.objects.exclude(pk=hook["id"]).delete()
        webhooks.webhooks_notify(personas.project, "check", {})
        deliver_pending()
        delivery = WebhookDelivery.objects.get()
        assert delivery.status == "failed" and "not allowed" in delivery.error
        assert first.calls == [] and second.calls == []
    finally:
        first.stop()
        second.stop()


def test_a_receivers_answer_never_reaches_the_log(personas, api, receiver, settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    secret_page = b"<h1>500</h1> db password=hunter2 at 10.0.0.7"
    hook = register(api, personas.admin, personas.project, receiver.url())
    redirect = register(api, personas.admin, personas.project, receiver.url("/r"))
    receiver.answer("/hook", 500, body=secret_page)
    receiver.answer("/r", 302, location="http://10.0.0.7/?password=hunter2")
    webhooks.webhooks_notify(personas.project, "check", {})
    deliver_pending()
    refused = WebhookDelivery.objects.get(webhook_id=hook["id"])
    assert refused.response_status == 500
    assert refused.error == (
        "gave up after 1 calls: HTTP 500: the receiver refused the call "
        "(its answer is not kept)"
    )
    redirected = WebhookDelivery.objects.get(webhook_id=redirect["id"])
    assert redirected.error.endswith("HTTP 302: redirects are not followed")
    for h in (hook, redirect):
        log = api(personas.admin).get(f"/api/webhooks/{h['id']}/deliveries/")
        assert "password" not in log.content.decode()
        assert "hunter2" not in log.content.decode()


def test_a_project_has_at_most_the_deployments_number_of_webhooks(
    personas, api, receiver, settings
):
    assert settings.WEBHOOK_MAX_PER_PROJECT == 20  # the default
    hooks = [
        register(api, personas.admin, personas.project, receiver.url(f"/{i}"))
        for i in range(20)
    ]
    admin = api(personas.admin)
    body = {"project": personas.project.pk, "url": receiver.url("/21")}
    refused = admin.post("/api/webhooks/", body, format="json")
    assert refused.status_code == 400
    detail = refused.json()["detail"]
    assert "the project has 20 webhooks" in detail
    assert "WEBHOOK_MAX_PER_PROJECT" in detail
    assert Webhook.objects.count() == 20
    # So one run's end queues at most 20 calls.
    assert len(webhooks.webhooks_notify(personas.project, "check", {})) == 20
    # Another project has a cap of its own, and deleting one makes room.
    other = make_project()
    Membership.objects.create(project=other, user=personas.admin, role=Role.ADMIN)
    register(api, personas.admin, other, receiver.url())
    assert admin.delete(f"/api/webhooks/{hooks[0]['id']}/").status_code == 204
    assert admin.post("/api/webhooks/", body, format="json").status_code == 201


def test_the_signature_covers_the_delivery_id(personas, api, receiver):
    hook = register(api, personas.admin, personas.project, receiver.url())
    webhooks.webhooks_notify(personas.project, "check", {"checked": 1})
    deliver_pending()
    [call] = receiver.calls
    verify = readme_verify()
    assert verify(hook["secret"], call.message, call.body)
    # The same body and timestamp under another delivery id fail the check: a
    # receiver dropping duplicates by id cannot be fed a replay as new.
    replayed = Message()
    for name in ("X-SafePassage-Timestamp", "X-SafePassage-Signature"):
        replayed[name] = call.message[name]
    replayed["X-SafePassage-Delivery"] = str(
        int(call.message["X-SafePassage-Delivery"]) + 1
    )
    assert not verify(hook["secret"], replayed, call.body)
    # ...and the signature is not the one over timestamp and body alone.
    timestamp = call.headers["x-safepassage-timestamp"]
    unsigned_id = hmac.new(
        hook["secret"].encode(), f"{timestamp}.".encode() + call.body, hashlib.sha256
    ).hexdigest()
    assert call.headers["x-safepassage-signature"] != f"sha256={unsigned_id}"
