"""Webhooks (issue 15): URLs a project calls when one of its runs ends (a
check pass, an extraction, grading, consistency or training run), so that a
pipeline can wait on the app instead of polling it.

Each call is a WebhookDelivery row, written with the run's end and sent by
the ``deliver_webhook`` task once that commits. The task POSTs the payload as
JSON, signed with the webhook's secret (HMAC-SHA256 over
``"{timestamp}.{delivery id}.{body}"``), and retries a non-2xx answer or a
network error with Celery's retry and a doubling countdown, up to
WEBHOOK_MAX_ATTEMPTS calls. Delivery is at least once: a worker dying
mid-call sends it again, with the same X-SafePassage-Delivery id (signed, so
that it cannot be changed) for the receiver to drop the duplicate.

The URL is where the server sends requests, so its host and port must be
ones the deployment lists in WEBHOOK_ALLOWED_HOSTS (checked at registration
and again before every call), only http(s), and redirects are never
followed. A call ends at one deadline (WEBHOOK_TIMEOUT_SECONDS) however the
receiver drips its answer, holds no row lock meanwhile, and the log keeps
the answer's status, never its body (an internal service's error page is
not for the project's admins to read).
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import logging
import secrets
import socket
import threading
import time
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from annotator.core.dispatch import send_after_commit
from annotator.core.errors import ApplicationError
from annotator.core.locks import advisory_lock
from annotator.models import (
    Claim,
    Project,
    TrainingRun,
    Webhook,
    WebhookDelivery,
    llm_run_models,
)
from annotator.projects.access import MANAGE, projects_for

logger = logging.getLogger(__name__)

#: Longest wait between two calls of one delivery.
MAX_BACKOFF_SECONDS = 3600
_ERROR_CHARS = 2000
# High bits of the Postgres advisory lock key held while a delivery's call is
# made (grading's runs are 0x5AFE, consistency's 0x5AFF).
_LOCK_CLASS = 0x5B00


def webhook_events() -> list[str]:
    """What a webhook can be called for: a check's end, and the end of each
    kind of run (each LLM run model's ``EVENT``)."""
    return ["check", *sorted(model.EVENT for model in llm_run_models()), "training"]


# --- the allow-list (SSRF guard) -----------------------------------------------


def _allowed_hosts() -> list[str]:
    # Read at each call: tests and a settings reload see the current value.
    return list(settings.WEBHOOK_ALLOWED_HOSTS)


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def _host_allowed(hostname: str, port: int, scheme: str, allowed: list[str]) -> bool:
    """``host`` in the list allows the scheme's default port of it alone,
    ``host:port`` that port, ``host:*`` any port: a bare host name never opens
    every service listening on that machine."""
    for entry in allowed:
        entry = entry.strip()
        any_port = entry.endswith(":*")
        try:
            parts = urlsplit("//" + entry.removesuffix(":*"))
            entry_port = parts.port or _default_port(scheme)
        except ValueError:
            continue  # a malformed entry allows nothing
        if parts.hostname == hostname and (any_port or entry_port == port):
            return True
    return False


def webhook_url_problem(url: str) -> str | None:
    """What makes ``url`` one the server will not call, or None."""
    allowed = _allowed_hosts()
    if not allowed:
        return (
            "webhooks are turned off on this server: the deployment allows no "
            "host (WEBHOOK_ALLOWED_HOSTS is empty)"
        )
    if not url:
        return "a webhook needs a URL"
    if len(url) > Webhook._meta.get_field("url").max_length:
        return "the webhook URL is longer than 1000 characters"
    if any(c.isspace() or not c.isprintable() for c in url):
        return "the webhook URL contains spaces or control characters"
    try:
        parts = urlsplit(url)
    except ValueError as e:  # a bracketed IPv6 host that is not one: http://[::1/
        return f"the webhook URL is malformed ({e})"
    if parts.scheme not in ("http", "https"):
        return f"webhook URLs are http or https, not {parts.scheme or 'none'!r}"
    try:
        port = parts.port or _default_port(parts.scheme)
    except ValueError:
        return "the webhook URL has a bad port"
    if not parts.hostname:
        return "the webhook URL has no host"
    if not _host_allowed(parts.hostname, port, parts.scheme, allowed):
        return (
            f"webhook host {parts.netloc.rpartition('@')[2]!r} is not allowed here; "
            f"the deployment allows {', '.join(allowed)} (WEBHOOK_ALLOWED_HOSTS)"
        )
    if "@" in parts.netloc:
        # Sent nowhere (urllib reads no credentials from a URL), and shown to
        # every admin of the project in the webhook list.
        return (
            "the webhook URL holds a user name or password; the receiver checks "
            "the signature instead"
        )
    return None


def events_clean(events: Any) -> list[str]:
    """The run kinds a webhook is called for, checked; empty means all.

    Raises:
        ApplicationError: not a list of known kinds.
    """
    if events is None:
        return []
    if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
        raise ApplicationError("events must be a list of run kinds")
    known = webhook_events()
    unknown = sorted(set(events) - set(known))
    if unknown:
        raise ApplicationError(
            f"unknown events {', '.join(map(repr, unknown))}; a webhook can be "
            f"called for {', '.join(known)} (none for all)"
        )
    return [e for e in known if e in events]


# --- registration --------------------------------------------------------------


def webhooks_for(user) -> QuerySet[Webhook]:
    """The webhooks of the projects ``user`` administers (their secrets sign
    calls, and their URLs and logs are for the admins alone)."""
    return Webhook.objects.filter(project__in=projects_for(user, roles=MANAGE))


def webhook_create(
    *, project: Project, url: str, events: Any = None, created_by=None
) -> Webhook:
    """Register ``url`` for ``project``'s runs with a new secret, which the
    caller shows once (``webhook.secret``); nothing lists it again.

    Raises:
        ApplicationError: the URL is not one the deployment allows, the
            events are not run kinds, or the project has WEBHOOK_MAX_PER_PROJECT
            webhooks already.
    """
    problem = webhook_url_problem(url)
    if problem:
        raise ApplicationError(problem)
    events = events_clean(events)
    limit = settings.WEBHOOK_MAX_PER_PROJECT
    with transaction.atomic():
        # The project row's lock orders two registrations at once, so that
        # both cannot pass the cap.
        Project.objects.select_for_update().filter(pk=project.pk).first()
        if Webhook.objects.filter(project=project).count() >= limit:
            raise ApplicationError(
                f"the project has {limit} webhooks, the most one may have "
                "(WEBHOOK_MAX_PER_PROJECT); delete one before registering another"
            )
        return Webhook.objects.create(
            project=project,
            url=url,
            secret=secrets.token_hex(32),
            events=events,
            created_by=created_by,
        )


def webhook_update(
    *, webhook: Webhook, events: Any = None, is_active: bool | None = None
) -> Webhook:
    """Pause or resume a webhook, or change its events (the URL and secret
    stay: register a new webhook for another URL)."""
    fields = []
    if events is not None:
        webhook.events = events_clean(events)
        fields.append("events")
    if is_active is not None:
        webhook.is_active = bool(is_active)
        fields.append("is_active")
    if fields:
        webhook.save(update_fields=fields)
    return webhook


# --- firing --------------------------------------------------------------------


def webhooks_notify(project: Project | int, event: str, payload: dict) -> list[int]:
    """One delivery per active webhook of ``project`` called for ``event``,
    each sent by a task once the current transaction commits; the ids.

    Never raises: a webhook must not fail the run or check that fired it, so a
    failure here is logged and nothing is sent.
    """
    project_id = project if isinstance(project, int) else project.pk
    body = {"event": event, "project": project_id, **payload}
    try:
        # A savepoint: a failure here leaves the caller's transaction usable.
        with transaction.atomic():
            webhooks = Webhook.objects.filter(
                Q(events=[]) | Q(events__contains=[event]),
                project_id=project_id,
                is_active=True,
            )
            deliveries = [
                WebhookDelivery.objects.create(webhook=w, event=event, payload=body)
                for w in webhooks.only("pk")
            ]
            for delivery in deliveries:
                send_after_commit("annotator.tasks.deliver_webhook", delivery.pk)
    except Exception:
        logger.exception("project %s: %s webhooks not sent", project_id, event)
        return []
    return [d.pk for d in deliveries]


def _text(value: str) -> str:
    return value if len(value) <= _ERROR_CHARS else value[:_ERROR_CHARS] + "..."


def run_payload(run) -> tuple[str, dict]:
    """The event and payload telling that ``run`` (any kind) has ended."""
    if isinstance(run, TrainingRun):
        event = "training"
        metrics = run.metrics or {}
        progress = {"fraction": run.progress, "stage": run.stage}
        details = {
            key: metrics[key]
            for key in ("version", "promoted", "reason")
            if key in metrics
        }
    else:
        event = run.EVENT
        progress = {"done": run.progress_done, "total": run.progress_total}
        details = run.webhook_details()
    return event, {
        "run": run.pk,
        "status": run.status,
        "progress": progress,
        "error": _text(run.error),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        **details,
    }


def run_ended_notify(model, run_id: int) -> list[int]:
    """Tell the project's webhooks that the run ``run_id`` of ``model`` has
    ended (called by annotator.runs.lifecycle once per run)."""
    try:
        run = model.objects.filter(pk=run_id).first()
        if run is None:
            return []
        event, payload = run_payload(run)
    except Exception:
        logger.exception("%s %s: webhooks not sent", model.__name__, run_id)
        return []
    return webhooks_notify(run.project_id, event, payload)


def check_ended_notify(project_id: int, summary) -> list[int]:
    """Tell the project's webhooks that a check pass over it has ended: what
    it checked, and how many claims are still unchecked (other workers'
    share, or imported since) for a caller waiting for zero."""
    if not summary.checked:
        return []  # a duplicate or swept task that found nothing to do
    remaining = Claim.objects.filter(project_id=project_id, checked_at=None)
    return webhooks_notify(
        project_id,
        "check",
        {
            "status": "succeeded",
            "checked": summary.checked,
            "safe": summary.safe,
            "unsafe": summary.unsafe,
            "unscored": summary.unscored,
            "errors": len(summary.errors),
            "scorer": summary.scorer,
            "remaining": remaining.count(),
            "finished_at": timezone.now().isoformat(),
        },
    )


# --- delivery ------------------------------------------------------------------


def signature(secret: str, timestamp: str, delivery_id: int, body: bytes) -> str:
    """The X-SafePassage-Signature of a call: ``sha256=`` and the hex
    HMAC-SHA256 of ``"{timestamp}.{delivery_id}.{body}"`` with the webhook's
    secret. The delivery id is signed because receivers drop duplicates by it:
    unsigned, a replayed body under a new id would pass for a new event."""
    message = f"{timestamp}.{delivery_id}.".encode() + body
    digest = hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


class _Deadline:
    """One call's deadline. A socket timeout bounds each read, and a receiver
    sending a byte just inside it would hold the call for ever; so every
    socket the call opens (to the receiver, or to a proxy) is shut down when
    the deadline passes, whatever it is waiting for: the connection, the TLS
    handshake, the answer's headers."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._at = time.monotonic() + seconds
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True

    @property
    def passed(self) -> bool:
        return time.monotonic() >= self._at

    def connect(self, address, timeout=None, *args, **kwargs) -> socket.socket:
        """socket.create_connection, the socket cut off at the deadline."""
        left = max(self._at - time.monotonic(), 0.001)
        sock = socket.create_connection(
            address, min(timeout or left, left), *args, **kwargs
        )
        with self._lock:
            self._sockets.append(sock)
        if self.passed:
            self._cut()
        return sock

    def _cut(self) -> None:
        with self._lock:
            for sock in self._sockets:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass  # closed already: the call has ended

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()


class _CutOffHandler:
    """An http(s) handler whose connections open their sockets through a
    :class:`_Deadline`."""

    def __init__(self, deadline: _Deadline):
        super().__init__()
        self._deadline = deadline

    def do_open(self, http_class, req, **kwargs):
        def connection(*args, **kw):
            conn = http_class(*args, **kw)
            conn._create_connection = self._deadline.connect
            return conn

        return super().do_open(connection, req, **kwargs)


class _HTTPHandler(_CutOffHandler, urllib.request.HTTPHandler):
    pass


class _HTTPSHandler(_CutOffHandler, urllib.request.HTTPSHandler):
    pass


def _opener(deadline: _Deadline) -> urllib.request.OpenerDirector:
    # No redirect handler (a 3xx is an answer, never followed to a host the
    # list does not name) and no error processor (every status comes back as
    # an answer); http and https only.
    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(),
        _HTTPHandler(deadline),
        _HTTPSHandler(deadline),
    ):
        opener.add_handler(handler)
    return opener


def _post(
    url: str, body: bytes, headers: dict[str, str], *, timeout: float
) -> tuple[int | None, str]:
    """One call, over within ``timeout`` seconds in all: the answer's status
    (None when there was none) and what went wrong ("" for a 2xx). What the
    receiver sent back is never part of it: the status alone is logged, so
    that a URL cannot read an internal service's answers into the log."""
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    with _Deadline(timeout) as deadline:
        try:
            # The body of the answer is never read: its status is the answer.
            with _opener(deadline).open(request, timeout=timeout) as response:
                status = response.status
        except (OSError, http.client.HTTPException, ValueError) as e:
            if deadline.passed or isinstance(getattr(e, "reason", e), TimeoutError):
                return None, (
                    f"no answer within {timeout:g} s (WEBHOOK_TIMEOUT_SECONDS)"
                )
            if isinstance(e, http.client.HTTPException):
                return None, f"{type(e).__name__}: the answer is not HTTP"
            return None, f"{type(e).__name__}: {e}"
    if 200 <= status < 300:
        return status, ""
    if 300 <= status < 400:
        return status, f"HTTP {status}: redirects are not followed"
    return (
        status,
        f"HTTP {status}: the receiver refused the call (its answer is not kept)",
    )


def retry_countdown(attempts: int) -> float:
    """Seconds to wait after the ``attempts``-th failed call."""
    backoff = settings.WEBHOOK_RETRY_BACKOFF * 2 ** max(attempts - 1, 0)
    return min(backoff, MAX_BACKOFF_SECONDS)


#: Past its next call's due time by this much, a pending delivery's message is
#: taken for lost (the broker was down when it was sent, or its worker died).
LOST_AFTER_SECONDS = 600


def deliveries_lost() -> list[int]:
    """Pending deliveries whose next call is overdue by LOST_AFTER_SECONDS:
    their task message was lost, and beat's sweep sends it again (a message
    that was only late finds them delivered, and does nothing)."""
    now = timezone.now()
    lost = []
    for pk, attempts, created, last in WebhookDelivery.objects.filter(
        status=WebhookDelivery.Status.PENDING
    ).values_list("pk", "attempts", "created_at", "last_attempt_at"):
        wait = retry_countdown(attempts) if attempts else 0.0
        due = (last or created).timestamp() + wait + LOST_AFTER_SECONDS
        if now.timestamp() > due:
            lost.append(pk)
    return lost


def webhook_deliver(*, delivery_id: int) -> float | None:
    """Make one call of a pending delivery and record it; the seconds to wait
    before the next call, or None when there is none to make (delivered,
    failed for good, or not pending).

    Safe to run twice: a delivery no longer pending, or being called by
    another worker, is left alone.
    """
    # No transaction and no row lock through the call (up to
    # WEBHOOK_TIMEOUT_SECONDS): a session advisory lock keeps a duplicate
    # message from calling the receiver at the same time, and ends with the
    # worker's connection if the worker dies mid-call.
    with advisory_lock(_LOCK_CLASS, delivery_id) as held:
        if not held:
            return None
        delivery = (
            WebhookDelivery.objects.select_related("webhook")
            .filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING)
            .first()
        )
        if delivery is None:
            return None
        webhook = delivery.webhook
        # Checked again: the list may have been narrowed since registration.
        problem = webhook_url_problem(webhook.url) or (
            "" if webhook.is_active else "the webhook was paused before the call"
        )
        if problem:
            delivery.status, delivery.error = WebhookDelivery.Status.FAILED, problem
            delivery.last_attempt_at = timezone.now()
            delivery.save(update_fields=["status", "error", "last_attempt_at"])
            return None
        body = json.dumps(delivery.payload, separators=(",", ":")).encode()
        timestamp = str(int(time.time()))
        status, error = _post(
            webhook.url,
            body,
            {
                "Content-Type": "application/json",
                "User-Agent": "SafePassage-Webhook",
                "X-SafePassage-Event": delivery.event,
                "X-SafePassage-Delivery": str(delivery.pk),
                "X-SafePassage-Timestamp": timestamp,
                "X-SafePassage-Signature": signature(
                    webhook.secret, timestamp, delivery.pk, body
                ),
            },
            timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
        )
        delivery.attempts += 1
        delivery.response_status = status
        delivery.error = _text(error)
        delivery.last_attempt_at = timezone.now()
        retry_in = None
        if not error:
            delivery.status = WebhookDelivery.Status.DELIVERED
            delivery.delivered_at = delivery.last_attempt_at
        elif delivery.attempts >= settings.WEBHOOK_MAX_ATTEMPTS:
            delivery.status = WebhookDelivery.Status.FAILED
            delivery.error = _text(f"gave up after {delivery.attempts} calls: {error}")
        else:
            retry_in = retry_countdown(delivery.attempts)
        delivery.save(
            update_fields=[
                "status",
                "attempts",
                "response_status",
                "error",
                "last_attempt_at",
                "delivered_at",
            ]
        )
    if retry_in is None:
        log = logger.info if delivery.status == "delivered" else logger.warning
        log("webhook delivery %s: %s %s", delivery_id, delivery.status, error)
    return retry_in
