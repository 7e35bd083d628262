"""CourtListener's v4 REST API as a :class:`~.sources.CaseLawSource`.

Citations are resolved with the citation-lookup API, many per request; a
case's text comes from its cluster and the cluster's opinions. Every answer
is kept for the life of the client, so no citation or case is fetched twice.
The API token is the caller's to find (this library reads no environment).
"""

from __future__ import annotations

import html
import json
import re
import time
from bisect import bisect_right
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from http.client import HTTPException
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode, urljoin, urlsplit
from urllib.request import HTTPRedirectHandler, Request, build_opener

from ...errors import PipelineError
from .sources import CaseRecord, Opinion

DEFAULT_BASE_URL = "https://www.courtlistener.com"
API = "/api/rest/v4"
# A whole request answered 429 this many times running is not a rate limit
# that waiting fixes.
_MAX_THROTTLED = 5
_OPINION_FIELDS = (
    "id,type,ordering_key,plain_text,html_with_citations,html,html_lawbox,"
    "html_columbia,html_anon_2020,xml_harvard"
)
_MARKUP_FIELDS = _OPINION_FIELDS.split(",")[4:]
_LINE_BREAK = re.compile(r"<br\b[^>]*>", re.I)
_BLOCK_END = re.compile(r"</(?:p|div|h[1-6]|blockquote|li|tr)\s*>", re.I)
_TAG = re.compile(r"<[^>]*>")
_BLANK_LINES = re.compile(r"\n\s*\n\s*")
_CLUSTER_ID = re.compile(r"(?:/opinion/|/clusters/)(\d+)(?:/|$)|^(\d+)$")


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname, parts.port


class _SameOriginRedirects(HTTPRedirectHandler):
    """Follows a redirect within the server the token is for, with the token;
    one to another scheme, host or port is answered as the 3xx it is, so the
    token never goes anywhere but ``base_url``'s server. (urllib's own handler
    copies every header, Authorization included, to wherever it points.)"""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if _origin(newurl) != _origin(req.full_url):
            return None
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None:
            for name, value in req.unredirected_hdrs.items():
                new.add_unredirected_header(name, value)
        return new


_opener = build_opener(_SameOriginRedirects)


class CourtListenerError(PipelineError):
    """CourtListener could not be reached or refused a request.

    ``url`` is the request's URL and ``status`` its HTTP status (None when
    no response came back). The message never contains the API token.
    """

    def __init__(self, message: str, *, url: str, status: int | None = None):
        self.url = url
        self.status = status
        super().__init__(message)


class CourtListenerRateLimited(CourtListenerError):
    """CourtListener asked to wait longer than the client's ``max_wait``;
    ``wait_until`` is when it will take requests again (None if unsaid)."""

    def __init__(self, message: str, *, url: str, wait_until: datetime | None):
        self.wait_until = wait_until
        super().__init__(message, url=url, status=429)


class CourtListener:
    """A CourtListener v4 client answering :class:`~.sources.CaseLawSource`.

    Args:
        token: API token, sent as ``Authorization: Token <token>``.
        base_url: Server root, without ``/api``.
        batch_size: Most citations sent in one lookup request (the server
            answers at most 250 and marks the rest 429).
        max_wait: Longest wait in seconds a 429 may ask for before the
            client gives up with :class:`CourtListenerRateLimited`.
        timeout: Seconds to wait for each HTTP response.
        sleep: Called with the seconds to wait (tests pass a recorder).
        now: Current time, timezone-aware (tests pass a fixed clock).
    """

    name = "courtlistener"

    def __init__(
        self,
        token: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        batch_size: int = 250,
        max_wait: float = 120.0,
        timeout: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ):
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.base_url = base_url.rstrip("/")
        self.batch_size = batch_size
        self.max_wait = max_wait
        self.timeout = timeout
        self._token = token
        self._sleep = sleep
        self._now = now
        self._records: dict[str, list[CaseRecord]] = {}
        self._clusters: dict[int, dict[str, Any]] = {}
        self._opinions: dict[int, Opinion | None] = {}
        #: Citations that matched nothing: key -> (per-citation status, why).
        #: 404 is "not found"; 400 an unknown reporter or text CourtListener
        #: did not read as a citation.
        self.misses: dict[str, tuple[int, str]] = {}

    def lookup(self, citations: Sequence[str]) -> dict[str, list[CaseRecord]]:
        """The cases each citation names, one request per ``batch_size``.

        Args:
            citations: Keys as :func:`~.reporters.citation_key` writes them.

        Returns:
            For every distinct input, its cases: none (see :attr:`misses`
            for why), one, or several when a reporter page starts more than
            one case (status 300).

        Raises:
            CourtListenerError: A request failed (network, 401, 5xx).
            CourtListenerRateLimited: A 429 asked to wait beyond ``max_wait``.
        """
        keys = list(dict.fromkeys(citations))
        pending = [k for k in keys if k not in self._records]
        while pending:
            batch, pending = pending[: self.batch_size], pending[self.batch_size :]
            deferred = self._lookup_batch(batch)
            if len(deferred) == len(batch):  # no progress: waiting won't help
                raise CourtListenerError(
                    "CourtListener deferred every citation of a request (429)",
                    url=self.base_url + API + "/citation-lookup/",
                    status=429,
                )
            # Citations past the server's own cap go first in the next request.
            pending = deferred + pending
        return {k: list(self._records[k]) for k in keys}

    def opinion(self, case_id: str) -> Opinion | None:
        """A case's text, court and citations, fetched once then cached.

        Args:
            case_id: A ``CaseRecord.id`` from :meth:`lookup`, a cluster's
                URL, or a cluster id.

        Returns:
            The opinion (all its sub-opinions, lead first), or None when the
            cluster does not exist or has no text.

        Raises:
            CourtListenerError: A request failed (network, 401, 5xx).
            CourtListenerRateLimited: A 429 asked to wait beyond ``max_wait``.
        """
        m = _CLUSTER_ID.search(case_id.strip())
        if not m:
            return None
        cid = int(m[1] or m[2])
        if cid not in self._opinions:
            self._opinions[cid] = self._fetch_opinion(cid)
        return self._opinions[cid]

    def _lookup_batch(self, batch: list[str]) -> list[str]:
        """Looks up one batch; returns the keys the server deferred (429)."""
        text = "; ".join(batch)
        starts = [0]
        for earlier in batch[:-1]:
            starts.append(starts[-1] + len(earlier) + 2)
        items = self._call("POST", f"{API}/citation-lookup/", {"text": text})
        found: dict[str, list[CaseRecord]] = {k: [] for k in batch}
        answered: dict[str, tuple[int, str]] = {}
        deferred: list[str] = []
        # An answer names its citation as normalised by the server's eyecite;
        # when that spelling differs from ours, its offset in our text says.
        for item in items if isinstance(items, list) else []:
            names = [*item.get("normalized_citations", ()), item.get("citation")]
            key = next((n for n in names if n in found), None)
            if key is None and isinstance(item.get("start_index"), int):
                key = batch[bisect_right(starts, item["start_index"]) - 1]
            if key is None:
                continue
            status = item.get("status")
            if status == 429:
                deferred.append(key)
            elif status in (200, 300):
                found[key] += [self._record(c) for c in item.get("clusters") or ()]
                answered[key] = (status, "")
            else:
                answered.setdefault(key, (status, item.get("error_message") or ""))
        for key in batch:
            if key not in answered and key in deferred:
                continue
            status, why = answered.get(key, (400, "not read as a citation"))
            records = list({r.id: r for r in found[key]}.values())
            self._records[key] = records
            if not records:
                self.misses[key] = (status, why)
        return [k for k in dict.fromkeys(deferred) if k not in answered]

    def _record(self, cluster: dict[str, Any]) -> CaseRecord:
        # Kept so that opinion() need not fetch a looked-up cluster again.
        self._clusters[int(cluster["id"])] = cluster
        return CaseRecord(
            id=self._case_id(cluster),
            case_name=cluster.get("case_name") or cluster.get("case_name_full") or "",
            citations=_citations(cluster),
            date=cluster.get("date_filed"),
            has_text=True,
            source=self.name,
        )

    def _case_id(self, cluster: dict[str, Any]) -> str:
        path = cluster.get("absolute_url") or f"/opinion/{cluster['id']}/"
        return self.base_url + path

    def _fetch_opinion(self, cid: int) -> Opinion | None:
        cluster = self._clusters.get(cid) or self._call(
            "GET", f"{API}/clusters/{cid}/", missing_ok=True
        )
        if not cluster:
            return None
        # Rebuild related URLs on base_url: the token goes to no other host.
        parts = []
        for url in cluster.get("sub_opinions") or ():
            oid = _last_id(url)
            path = f"{API}/opinions/{oid}/?fields={_OPINION_FIELDS}"
            if oid and (op := self._call("GET", path, missing_ok=True)):
                parts.append(op)
        parts.sort(key=_reading_order)
        text = "\n\n".join(t for t in map(_opinion_text, parts) if t)
        if not text:
            return None
        court = None
        if docket_id := cluster.get("docket_id") or _last_id(cluster.get("docket")):
            path = f"{API}/dockets/{docket_id}/?fields=court_id"
            court = (self._call("GET", path, missing_ok=True) or {}).get("court_id")
        return Opinion(
            id=self._case_id(cluster),
            case_name=cluster.get("case_name") or cluster.get("case_name_full") or "",
            citations=_citations(cluster),
            text=text,
            court=court,
            date=cluster.get("date_filed"),
            syllabus=_strip_tags(cluster.get("syllabus") or "") or None,
        )

    def _call(
        self,
        method: str,
        path: str,
        form: dict[str, str] | None = None,
        *,
        missing_ok: bool = False,
    ) -> Any:
        """One API call's JSON, waiting out 429s; None for a 404 if missing_ok."""
        url = self.base_url + path
        data = urlencode(form).encode() if form is not None else None
        request = Request(url, data, {"Accept": "application/json"}, method=method)
        # Unredirected: only _SameOriginRedirects carries it on.
        request.add_unredirected_header("Authorization", f"Token {self._token}")
        for _ in range(_MAX_THROTTLED):
            try:
                try:
                    with _opener.open(request, timeout=self.timeout) as r:
                        return json.loads(r.read())
                except HTTPError as e:
                    with e:
                        status, body = e.code, e.read()
                        retry_after = e.headers.get("Retry-After")
                        location = e.headers.get("Location")
            except (URLError, OSError, HTTPException, ValueError) as e:
                reason = getattr(e, "reason", None) or e
                raise CourtListenerError(
                    f"CourtListener {method} {url}: {reason}", url=url
                ) from e
            if status == 404 and missing_ok:
                return None
            if location and _origin(urljoin(url, location)) != _origin(url):
                raise CourtListenerError(
                    f"CourtListener {method} {url}: HTTP {status} redirects to "
                    "another server, not followed: the token is for "
                    f"{self.base_url} alone",
                    url=url,
                    status=status,
                )
            detail = _detail(body)
            if status != 429:
                message = f"CourtListener {method} {url}: HTTP {status}"
                if detail and self._token:
                    detail = detail.replace(self._token, "***")
                raise CourtListenerError(
                    f"{message} {detail}".strip(), url=url, status=status
                )
            self._wait(url, body, retry_after)
        raise CourtListenerError(
            f"CourtListener {method} {url}: HTTP 429 {_MAX_THROTTLED} times running",
            url=url,
            status=429,
        )

    def _wait(self, url: str, body: bytes, retry_after: str | None) -> None:
        """Sleeps until a 429's ``wait_until`` (or ``Retry-After``) passes."""
        until = None
        try:
            until = datetime.fromisoformat(json.loads(body)["wait_until"])
            if until.tzinfo is None:  # the server writes UTC
                until = until.replace(tzinfo=UTC)
            delay: float | None = (until - self._now()).total_seconds()
        except (ValueError, KeyError, TypeError):
            delay = (
                float(retry_after) if retry_after and retry_after.isdigit() else None
            )
        if delay is None or delay > self.max_wait:
            asked = "no retry time" if delay is None else f"a wait of {delay:.0f}s"
            raise CourtListenerRateLimited(
                f"CourtListener {url}: HTTP 429 asks {asked}"
                f" (max_wait {self.max_wait:g}s)",
                url=url,
                wait_until=until,
            )
        self._sleep(max(delay, 0.0))


def _citations(cluster: dict[str, Any]) -> tuple[str, ...]:
    return tuple(
        f"{c['volume']} {c['reporter']} {c['page']}"
        for c in cluster.get("citations") or ()
        if c.get("volume") is not None and c.get("reporter") and c.get("page")
    )


def _last_id(url: Any) -> str | None:
    m = re.search(r"(\d+)/?$", str(url or ""))
    return m[1] if m else None


def _reading_order(op: dict[str, Any]) -> tuple[bool, int, str]:
    # Harvard's ordering_key where set, else the type ("020lead" before
    # "030concurrence" before "040dissent").
    key = op.get("ordering_key")
    return (key is None, key or 0, op.get("type") or "")


def _detail(body: bytes) -> str:
    """The error's own words: DRF's ``detail``, else the body, shortened."""
    try:
        data = json.loads(body)
    except ValueError:
        return ""
    if isinstance(data, dict) and (data.get("detail") or data.get("error_message")):
        return str(data.get("detail") or data.get("error_message"))
    return json.dumps(data)[:200]


def _opinion_text(op: dict[str, Any]) -> str:
    if (op.get("plain_text") or "").strip():
        return op["plain_text"].strip()
    markup = next((op[f] for f in _MARKUP_FIELDS if (op.get(f) or "").strip()), "")
    return _strip_tags(markup)


def _strip_tags(markup: str) -> str:
    # Paragraphs stay apart in the text, as plain_text has them.
    markup = _BLOCK_END.sub("\n\n", _LINE_BREAK.sub("\n", markup))
    text = html.unescape(_TAG.sub("", markup))
    return _BLANK_LINES.sub("\n\n", text).strip()
