"""A scriptable CourtListener v4 server for tests, and its pytest fixture.

The client talks to it over HTTP on 127.0.0.1, so headers, form bodies,
status codes and retries are exercised as they are against the real API.
It answers from the cases it is given::

    fake_courtlistener.add_case(1, "Smith v. Jones", ["561 U.S. 593"],
                                plain_text="The opinion.")
    fake_courtlistener.reject_reporter("Fake.")     # per-citation 400
    fake_courtlistener.max_per_request = 2          # per-citation 429 after 2
    fake_courtlistener.reply_throttled(wait_until)  # next request: 429
    fake_courtlistener.reply_status(500)            # next request: 500
    client = CourtListener("tok", base_url=fake_courtlistener.base_url)

Scripted replies answer the next requests of any kind, in order; with none
left it answers from its cases. The citation-lookup endpoint reads ``text``
as citations separated by ``;`` (as the client writes it) or takes
``volume``/``reporter``/``page``; a citation of two or more cases answers
300, of none 404.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    form: dict[str, str]


class FakeCourtListener:
    """The server; ``base_url`` is its root, as the client's ``base_url``."""

    def __init__(self):
        self.requests: list[RecordedRequest] = []
        self.max_per_request = 250
        self.clusters: dict[int, dict[str, Any]] = {}
        self.opinions: dict[int, dict[str, Any]] = {}
        self.dockets: dict[int, dict[str, Any]] = {}
        self._by_citation: dict[str, list[int]] = {}
        self._bad_reporters: set[str] = set()
        self._script: deque[Answer] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        # A short poll interval makes shutdown, hence every test's teardown, quick.
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def lookups(self) -> list[list[str]]:
        """The citations of each citation-lookup request, in arrival order."""
        return [
            _split(r.form.get("text", ""))
            if "text" in r.form
            else [f"{r.form['volume']} {r.form['reporter']} {r.form['page']}"]
            for r in self.requests
            if r.path.startswith("/api/rest/v4/citation-lookup/")
        ]

    def start(self) -> FakeCourtListener:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def add_case(
        self,
        cluster_id: int,
        case_name: str,
        citations: list[str],
        *,
        date_filed: str = "2010-06-28",
        court_id: str = "scotus",
        plain_text: str = "",
        html_with_citations: str = "",
    ) -> None:
        """A cluster with one opinion (id ``cluster_id * 10``) and a docket."""
        base = self.base_url + "/api/rest/v4"
        slug = re.sub(r"[^a-z0-9]+", "-", case_name.lower()).strip("-")
        oid = cluster_id * 10
        self.clusters[cluster_id] = {
            "id": cluster_id,
            "resource_uri": f"{base}/clusters/{cluster_id}/",
            "absolute_url": f"/opinion/{cluster_id}/{slug}/",
            "case_name": case_name,
            "case_name_full": case_name,
            "date_filed": date_filed,
            "docket": f"{base}/dockets/{cluster_id}/",
            "docket_id": cluster_id,
            "citations": [_parts(c) for c in citations],
            "sub_opinions": [f"{base}/opinions/{oid}/"],
            "syllabus": "",
        }
        self.opinions[oid] = {
            "id": oid,
            "cluster": f"{base}/clusters/{cluster_id}/",
            "type": "020lead",
            "ordering_key": None,
            "plain_text": plain_text,
            "html_with_citations": html_with_citations,
            "html": "",
            "xml_harvard": "",
        }
        self.dockets[cluster_id] = {"id": cluster_id, "court_id": court_id}
        for c in citations:
            self._by_citation.setdefault(c, []).append(cluster_id)

    def reject_reporter(self, reporter: str) -> None:
        """Citations in ``reporter`` answer 400 (unknown reporter)."""
        self._bad_reporters.add(reporter)

    def reply_status(
        self, status: int, body: Any = None, *, headers: dict[str, str] | None = None
    ) -> None:
        """Answer the next request with ``status`` and a DRF-style body."""
        body = {"detail": f"scripted {status}"} if body is None else body
        self._script.append(Answer(status, body, headers or {}))

    def reply_throttled(self, wait_until: datetime | None) -> None:
        """Answer the next request 429 as the citation throttle does."""
        body = {
            "error_message": "Too many requests (allowed rate: 60/min).",
            "wait_until": wait_until.isoformat() if wait_until else None,
        }
        self._script.append(Answer(429, body))

    @property
    def pending(self) -> int:
        """Scripted answers not yet used."""
        return len(self._script)

    def _lookup(self, form: dict[str, str]) -> list[dict[str, Any]]:
        if "text" in form:
            pieces, text, pos = [], form["text"], 0
            for cite in _split(text):
                start = text.index(cite, pos)
                pieces.append((cite, start))
                pos = start + len(cite)
        else:
            cite = f"{form.get('volume')} {form.get('reporter')} {form.get('page')}"
            pieces = [(cite, 0)]
        out = []
        for i, (cite, start) in enumerate(pieces):
            item = {
                "citation": cite,
                "normalized_citations": [cite],
                "start_index": start,
                "end_index": start + len(cite),
            }
            ids = self._by_citation.get(cite, [])
            reporter = " ".join(cite.split(" ")[1:-1])
            if i >= self.max_per_request:
                item.update(status=429, error_message="Too many citations requested.")
            elif reporter in self._bad_reporters:
                item.update(
                    normalized_citations=[],
                    status=400,
                    error_message="Unable to find reporter with abbreviation"
                    f" of '{reporter}'",
                )
            elif not ids:
                item.update(status=404, error_message=f"Citation not found: '{cite}'")
            else:
                # Newest first, as CourtListener orders them.
                clusters = [self.clusters[c] for c in sorted(ids, reverse=True)]
                item.update(status=300 if len(ids) > 1 else 200, clusters=clusters)
            out.append(item)
        return out

    def _get(self, path: str) -> tuple[int, Any]:
        tables = {
            "clusters": self.clusters,
            "opinions": self.opinions,
            "dockets": self.dockets,
        }
        m = re.fullmatch(r"/api/rest/v4/(clusters|opinions|dockets)/(\d+)/", path)
        if m and int(m[2]) in tables[m[1]]:
            return 200, tables[m[1]][int(m[2])]
        return 404, {"detail": "No OpinionCluster matches the given query."}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args):  # keep test output quiet
                pass

            def _answer(self, form: dict[str, str]) -> None:
                path = urlsplit(self.path).path
                with fake._lock:
                    fake.requests.append(
                        RecordedRequest(
                            self.command,
                            self.path,
                            {k.lower(): v for k, v in self.headers.items()},
                            form,
                        )
                    )
                    scripted = fake._script.popleft() if fake._script else None
                if scripted:
                    status, body, headers = (
                        scripted.status,
                        scripted.body,
                        scripted.headers,
                    )
                elif self.command == "POST" and path == "/api/rest/v4/citation-lookup/":
                    status, body, headers = 200, fake._lookup(form), {}
                elif self.command == "GET":
                    status, body, headers = *fake._get(path), {}
                else:
                    status, body, headers = 404, {"detail": "Not found."}, {}
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting

            def do_GET(self):
                self._answer({})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode(errors="replace")
                self._answer({k: v[0] for k, v in parse_qs(raw).items()})

        return Handler


def _split(text: str) -> list[str]:
    return [c.strip() for c in text.split(";") if c.strip()]


def _parts(citation: str) -> dict[str, Any]:
    volume, *reporter, page = citation.split(" ")
    return {
        "volume": int(volume),
        "reporter": " ".join(reporter),
        "page": page,
        "type": 1,
    }


@pytest.fixture
def fake_courtlistener():
    server = FakeCourtListener().start()
    yield server
    server.stop()
