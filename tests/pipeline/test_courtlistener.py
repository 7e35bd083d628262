"""The CourtListener client against a real local HTTP server."""

import socket
from datetime import UTC, datetime, timedelta

import pytest

from pipeline.checkers.citations.courtlistener import (
    CourtListener,
    CourtListenerError,
    CourtListenerRateLimited,
)
from pipeline.checkers.citations.sources import CaseLawSource, CaseRecord
from pipeline.errors import PipelineError

TOKEN = "secret-token-123"
NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


class Clock:
    """Injected ``sleep``/``now``: records waits, never sleeps."""

    def __init__(self):
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)

    def now(self) -> datetime:
        return NOW + timedelta(seconds=sum(self.slept))


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def client(fake_courtlistener, clock):
    return CourtListener(
        TOKEN,
        base_url=fake_courtlistener.base_url,
        max_wait=60,
        sleep=clock.sleep,
        now=clock.now,
    )


def test_found_citation_gives_its_case_record(fake_courtlistener, client):
    fake_courtlistener.add_case(
        7, "Bilski v. Kappos", ["561 U.S. 593", "130 S. Ct. 3218"]
    )

    source: CaseLawSource = client  # what the citation check holds
    found = source.lookup(["561 U.S. 593"])

    assert source.name == "courtlistener"
    assert found == {
        "561 U.S. 593": [
            CaseRecord(
                id=f"{fake_courtlistener.base_url}/opinion/7/bilski-v-kappos/",
                case_name="Bilski v. Kappos",
                citations=("561 U.S. 593", "130 S. Ct. 3218"),
                date="2010-06-28",
                has_text=True,
                source="courtlistener",
            )
        ]
    }
    assert client.misses == {}
    (request,) = fake_courtlistener.requests
    assert request.method == "POST"
    assert request.path == "/api/rest/v4/citation-lookup/"
    assert request.form == {"text": "561 U.S. 593"}
    assert request.headers["authorization"] == f"Token {TOKEN}"


def test_multiple_matches_give_every_cluster(fake_courtlistener, client):
    fake_courtlistener.add_case(1, "Alpha v. Beta", ["100 F.3d 200"])
    fake_courtlistener.add_case(2, "Gamma v. Delta", ["100 F.3d 200"])

    records = client.lookup(["100 F.3d 200"])["100 F.3d 200"]

    assert {r.case_name for r in records} == {"Alpha v. Beta", "Gamma v. Delta"}
    assert len({r.id for r in records}) == 2


def test_not_found_and_invalid_reporter_are_no_match_with_a_reason(
    fake_courtlistener, client
):
    fake_courtlistener.add_case(1, "Alpha v. Beta", ["100 F.3d 200"])
    fake_courtlistener.reject_reporter("Fake.")

    found = client.lookup(["999 U.S. 1", "12 Fake. 34", "100 F.3d 200"])

    assert found["999 U.S. 1"] == []
    assert found["12 Fake. 34"] == []
    assert len(found["100 F.3d 200"]) == 1
    assert client.misses["999 U.S. 1"][0] == 404
    assert client.misses["12 Fake. 34"][0] == 400
    assert "Fake." in client.misses["12 Fake. 34"][1]
    assert "100 F.3d 200" not in client.misses


def test_throttled_request_waits_until_wait_until_then_retries(
    fake_courtlistener, client, clock
):
    fake_courtlistener.add_case(1, "Alpha v. Beta", ["100 F.3d 200"])
    fake_courtlistener.reply_throttled(NOW + timedelta(seconds=42))

    found = client.lookup(["100 F.3d 200"])

    assert clock.slept == [42.0]
    assert len(found["100 F.3d 200"]) == 1
    assert fake_courtlistener.lookups == [["100 F.3d 200"], ["100 F.3d 200"]]


def test_wait_beyond_max_wait_raises(fake_courtlistener, client, clock):
    fake_courtlistener.reply_throttled(NOW + timedelta(hours=1))

    with pytest.raises(CourtListenerRateLimited) as raised:
        client.lookup(["100 F.3d 200"])

    assert isinstance(raised.value, CourtListenerError)
    assert isinstance(raised.value, PipelineError)
    assert raised.value.wait_until == NOW + timedelta(hours=1)
    assert clock.slept == []


def test_300_citations_go_in_batches_of_at_most_250(fake_courtlistener, client):
    keys = [f"{i} U.S. {i + 1}" for i in range(1, 301)]
    fake_courtlistener.add_case(1, "First v. Case", [keys[0]])
    fake_courtlistener.add_case(2, "Last v. Case", [keys[-1]])

    found = client.lookup(keys)

    assert [len(batch) for batch in fake_courtlistener.lookups] == [250, 50]
    assert sum(fake_courtlistener.lookups, []) == keys
    assert set(found) == set(keys)
    assert found[keys[0]][0].case_name == "First v. Case"
    assert found[keys[-1]][0].case_name == "Last v. Case"
    assert sum(bool(v) for v in found.values()) == 2


def test_citations_the_server_defers_go_in_the_next_batch(fake_courtlistener, clock):
    keys = [f"{i} F.3d {i}" for i in range(1, 6)]
    for i, key in enumerate(keys, start=1):
        fake_courtlistener.add_case(i, f"Case {i}", [key])
    fake_courtlistener.max_per_request = 2  # per-citation 429 past two
    client = CourtListener(
        TOKEN, base_url=fake_courtlistener.base_url, batch_size=3, sleep=clock.sleep
    )

    found = client.lookup(keys)

    assert fake_courtlistener.lookups == [keys[0:3], keys[2:5], keys[4:5]]
    assert [found[k][0].case_name for k in keys] == [f"Case {i}" for i in range(1, 6)]
    assert clock.slept == []


def test_a_citation_is_looked_up_once(fake_courtlistener, client):
    fake_courtlistener.add_case(1, "Alpha v. Beta", ["100 F.3d 200"])

    first = client.lookup(["100 F.3d 200", "999 U.S. 1"])
    again = client.lookup(["999 U.S. 1", "100 F.3d 200", "5 F.4th 6"])

    assert again["100 F.3d 200"] == first["100 F.3d 200"]
    assert again["999 U.S. 1"] == []
    assert fake_courtlistener.lookups == [["100 F.3d 200", "999 U.S. 1"], ["5 F.4th 6"]]


def test_opinion_text_is_fetched_once(fake_courtlistener, client):
    fake_courtlistener.add_case(
        7,
        "Bilski v. Kappos",
        ["561 U.S. 593"],
        court_id="scotus",
        plain_text="  The patent application is not patentable.  ",
    )
    case_id = client.lookup(["561 U.S. 593"])["561 U.S. 593"][0].id
    before = len(fake_courtlistener.requests)

    opinion = client.opinion(case_id)

    assert opinion is not None
    assert opinion.id == case_id
    assert opinion.text == "The patent application is not patentable."
    assert opinion.case_name == "Bilski v. Kappos"
    assert opinion.citations == ("561 U.S. 593",)
    assert opinion.court == "scotus"
    assert opinion.date == "2010-06-28"
    fetched = [r.path.split("?")[0] for r in fake_courtlistener.requests[before:]]
    # The looked-up cluster is reused; its opinion and docket are fetched.
    assert fetched == ["/api/rest/v4/opinions/70/", "/api/rest/v4/dockets/7/"]
    assert all(
        r.headers["authorization"] == f"Token {TOKEN}"
        for r in fake_courtlistener.requests
    )

    assert client.opinion(case_id) is opinion
    assert len(fake_courtlistener.requests) == before + 2


def test_opinion_without_plain_text_strips_the_html(fake_courtlistener, client):
    fake_courtlistener.add_case(
        3,
        "Alpha v. Beta",
        ["100 F.3d 200"],
        html_with_citations='<p>First &amp; <a href="/x/">foremost</a>.</p>'
        "<p>Then.<br>Next line.</p>",
    )

    opinion = client.opinion("3")

    assert opinion is not None
    assert opinion.text == "First & foremost.\n\nThen.\nNext line."
    assert [r.path.split("?")[0] for r in fake_courtlistener.requests] == [
        "/api/rest/v4/clusters/3/",
        "/api/rest/v4/opinions/30/",
        "/api/rest/v4/dockets/3/",
    ]


def test_missing_opinion_is_none_and_cached(fake_courtlistener, client):
    case_id = f"{fake_courtlistener.base_url}/opinion/999/no-such-case/"

    assert client.opinion(case_id) is None
    assert client.opinion(case_id) is None
    assert len(fake_courtlistener.requests) == 1


@pytest.mark.parametrize("status", [500, 503, 401])
def test_server_error_raises_without_the_token(fake_courtlistener, client, status):
    fake_courtlistener.reply_status(status, {"detail": f"Invalid token {TOKEN}."})

    with pytest.raises(CourtListenerError) as raised:
        client.lookup(["561 U.S. 593"])

    message = str(raised.value)
    assert TOKEN not in message
    assert f"{fake_courtlistener.base_url}/api/rest/v4/citation-lookup/" in message
    assert str(status) in message
    assert raised.value.status == status


def test_unreachable_server_raises_the_named_error(clock):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = CourtListener(TOKEN, base_url=f"http://127.0.0.1:{port}", timeout=5)

    with pytest.raises(CourtListenerError) as raised:
        client.lookup(["561 U.S. 593"])

    assert raised.value.status is None
    assert f"127.0.0.1:{port}" in str(raised.value)
    assert TOKEN not in str(raised.value)


def test_answers_in_another_spelling_map_back_by_offset(fake_courtlistener, client):
    cluster = {"id": 5, "absolute_url": "/opinion/5/a-v-b/", "case_name": "A v. B"}
    # The server's eyecite spells the second citation its own way, and did
    # not read the first one as a citation at all.
    answer = {
        "citation": "2 Foo 3",
        "normalized_citations": ["2 Foo. 3"],
        "start_index": len("1 Bar 1; "),
        "end_index": len("1 Bar 1; 2 Foo 3"),
        "status": 200,
        "clusters": [cluster],
    }
    fake_courtlistener.reply_status(200, [answer])

    found = client.lookup(["1 Bar 1", "2 Foo 3 (1999)"])

    assert [r.case_name for r in found["2 Foo 3 (1999)"]] == ["A v. B"]
    assert found["1 Bar 1"] == []
    assert client.misses["1 Bar 1"][0] == 400
