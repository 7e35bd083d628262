"""The CourtListener token stays with the server it is for: a redirect to
another server (another host or port) is not followed, one within the
server is, token and all (issue 27)."""

import pytest

from pipeline.checkers.citations.courtlistener import CourtListener, CourtListenerError
from tests.fake_courtlistener import FakeCourtListener

TOKEN = "secret-token-123"


@pytest.fixture
def elsewhere():
    """A second server on another port, holding the same case."""
    server = FakeCourtListener().start()
    server.add_case(3, "Smith v. Jones", ["561 U.S. 593"], plain_text="Held.")
    yield server
    server.stop()


@pytest.mark.fault
def test_a_redirect_to_another_server_never_carries_the_token(
    fake_courtlistener, elsewhere
):
    fake_courtlistener.add_case(3, "Smith v. Jones", ["561 U.S. 593"])
    fake_courtlistener.reply_status(
        302, headers={"Location": f"{elsewhere.base_url}/api/rest/v4/clusters/3/"}
    )
    client = CourtListener(TOKEN, base_url=fake_courtlistener.base_url)

    with pytest.raises(CourtListenerError, match="redirects to another server") as e:
        client.opinion("3")

    assert e.value.status == 302 and TOKEN not in str(e.value)
    assert f"the token is for {fake_courtlistener.base_url} alone" in str(e.value)
    assert elsewhere.requests == []
    [asked] = fake_courtlistener.requests
    assert asked.headers["authorization"] == f"Token {TOKEN}"


def test_a_redirect_within_the_server_keeps_the_token(fake_courtlistener):
    fake_courtlistener.add_case(
        3, "Smith v. Jones", ["561 U.S. 593"], plain_text="Held."
    )
    moved = f"{fake_courtlistener.base_url}/api/rest/v4/clusters/3/"
    fake_courtlistener.reply_status(301, headers={"Location": moved})
    client = CourtListener(TOKEN, base_url=fake_courtlistener.base_url)

    opinion = client.opinion("3")

    assert opinion is not None and opinion.text == "Held."
    requests = fake_courtlistener.requests
    assert len(requests) >= 2 and requests[1].path.startswith(
        "/api/rest/v4/clusters/3/"
    )
    assert {r.headers.get("authorization") for r in requests} == {f"Token {TOKEN}"}
