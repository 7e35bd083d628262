"""The failed-login brake: one count under every authenticate() (the login
page, the admin's login, the token endpoint); the client's address from
X-Forwarded-For only when the deployment trusts a proxy; made-up names never
lock out a real user, while guessing one real user's password stays slow.

LOGIN_THROTTLE_RATE is 10/min here: ten failures on one name from one
address, fifty on one user from anywhere or on users from one address."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import authenticate, get_user_model

pytestmark = pytest.mark.django_db

PASSWORD = "right-pw-1!"


def _user(name: str, **fields):
    return get_user_model().objects.create_user(name, password=PASSWORD, **fields)


def _page_login(client, username, password, **meta):
    return client.post("/login/", {"username": username, "password": password}, **meta)


def _admin_login(client, username, password, **meta):
    return client.post(
        "/admin/login/",
        {"username": username, "password": password, "next": "/admin/"},
        **meta,
    )


def _logged_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_admin_login_shares_the_page_count_and_refuses_the_right_password(client):
    staff = _user("staff-throttle", is_staff=True, is_superuser=True)
    at = {"REMOTE_ADDR": "10.7.0.1"}
    for _ in range(5):
        assert _page_login(client, staff.username, "wrong", **at).status_code == 200
    for _ in range(5):
        response = _admin_login(client, staff.username, "wrong", **at)
        assert response.status_code == 200 and not _logged_in(client)

    refused = _admin_login(client, staff.username, PASSWORD, **at)
    assert "Too many failed logins" in refused.content.decode()
    assert not _logged_in(client)
    assert _page_login(client, staff.username, PASSWORD, **at).status_code == 429
    assert not _logged_in(client)
    # The backend refuses too, for any caller of authenticate().
    request = client.get("/login/", **at).wsgi_request
    assert authenticate(request, username=staff.username, password=PASSWORD) is None


def test_admin_failures_stop_the_token_endpoint(client, api):
    staff = _user("staff-token", is_staff=True)
    for _ in range(10):
        _admin_login(client, staff.username, "wrong", REMOTE_ADDR="10.7.0.2")
    body = {"username": staff.username, "password": PASSWORD}
    response = api().post(
        "/api/auth/token/", body, format="json", REMOTE_ADDR="10.7.0.2"
    )
    assert response.status_code == 429


def test_forwarded_for_is_ignored_unless_the_deployment_trusts_a_proxy(client):
    user = _user("behind-proxy")
    proxy = {"REMOTE_ADDR": "10.7.1.1"}
    # Untrusted: a new X-Forwarded-For on every guess changes nothing.
    for i in range(10):
        forwarded = {"HTTP_X_FORWARDED_FOR": f"203.0.113.{i}"}
        _page_login(client, user.username, "wrong", **proxy, **forwarded)
    other = {"HTTP_X_FORWARDED_FOR": "198.51.100.7"}
    assert (
        _page_login(client, user.username, PASSWORD, **proxy, **other).status_code
        == 429
    )


def test_forwarded_for_names_the_client_behind_a_trusted_proxy(client, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    user = _user("trusted-proxy")
    proxy = {"REMOTE_ADDR": "10.7.2.1"}
    guesser = {"HTTP_X_FORWARDED_FOR": "203.0.113.50"}
    for _ in range(10):
        _page_login(client, user.username, "wrong", **proxy, **guesser)
    assert (
        _page_login(client, user.username, PASSWORD, **proxy, **guesser).status_code
        == 429
    )
    # What the client wrote left of the proxy's entry is not believed.
    spoofed = {"HTTP_X_FORWARDED_FOR": "198.51.100.8, 203.0.113.50"}
    assert (
        _page_login(client, user.username, PASSWORD, **proxy, **spoofed).status_code
        == 429
    )
    # The same user from another client behind the same proxy logs in.
    owner = {"HTTP_X_FORWARDED_FOR": "198.51.100.9"}
    response = _page_login(client, user.username, PASSWORD, **proxy, **owner)
    assert response.status_code == 302 and _logged_in(client)


def test_made_up_names_from_a_shared_address_do_not_lock_out_a_real_user(client, api):
    user = _user("real-user")
    shared = {"REMOTE_ADDR": "10.7.3.1"}  # a proxy every client comes through
    # Fifty failures on names no one has, case variants of the real one too.
    names = [f"nobody-{i}" for i in range(40)] + ["REAL-USER", "Real-User"] * 5
    for name in names:
        assert _page_login(client, name, "wrong", **shared).status_code == 200
    body = {"username": user.username, "password": PASSWORD}
    response = api().post("/api/auth/token/", body, format="json", **shared)
    assert response.status_code == 200, response.content
    response = _page_login(client, user.username, PASSWORD, **shared)
    assert response.status_code == 302 and _logged_in(client)


def test_guessing_one_real_users_password_is_still_throttled(client):
    user = _user("brute-target")
    # From one address: ten.
    for _ in range(10):
        _page_login(client, user.username, "wrong", REMOTE_ADDR="10.7.4.1")
    assert (
        _page_login(client, user.username, PASSWORD, REMOTE_ADDR="10.7.4.1").status_code
        == 429
    )
    # From many addresses: fifty in all, and then from anywhere.
    for i in range(2, 6):
        for _ in range(10):
            _page_login(client, user.username, "wrong", REMOTE_ADDR=f"10.7.4.{i}")
    response = _page_login(client, user.username, PASSWORD, REMOTE_ADDR="10.7.4.99")
    assert response.status_code == 429 and not _logged_in(client)


def test_trying_many_real_users_from_one_address_is_throttled(client):
    users = [_user(f"sprayed-{i}") for i in range(6)]
    for user in users[:5]:
        for _ in range(10):
            _page_login(client, user.username, "wrong", REMOTE_ADDR="10.7.5.1")
    last = users[5].username
    assert (
        _page_login(client, last, PASSWORD, REMOTE_ADDR="10.7.5.1").status_code == 429
    )
    assert (
        _page_login(client, last, PASSWORD, REMOTE_ADDR="10.7.5.2").status_code == 302
    )


@pytest.mark.bad_input
@pytest.mark.parametrize(
    "case, forwarded",
    enumerate(
        ["", "not-an-address", "1.2.3.4, ", ",,,", "\u0663.1.1.1", "2001:db8::1" * 50]
    ),
)
def test_a_malformed_forwarded_for_counts_against_the_proxy(
    client, settings, case, forwarded
):
    settings.TRUSTED_PROXY_COUNT = 1
    user = _user(f"odd-header-{case}")
    # Each case its own proxy: the counts outlive a test.
    proxy = f"10.7.6.{case + 1}"
    meta = {"REMOTE_ADDR": proxy, "HTTP_X_FORWARDED_FOR": forwarded}
    for _ in range(10):
        assert _page_login(client, user.username, "wrong", **meta).status_code == 200
    assert _page_login(client, user.username, PASSWORD, **meta).status_code == 429
    # Not against a client a well-formed header names.
    owner = {"REMOTE_ADDR": proxy, "HTTP_X_FORWARDED_FOR": "198.51.100.10"}
    assert _page_login(client, user.username, PASSWORD, **owner).status_code == 302


@pytest.mark.bad_input
@pytest.mark.parametrize("username", ["\ud800", "x" * 151, "a\x00b"])
def test_odd_user_names_are_a_clear_refusal(api, client, username):
    body = json.dumps({"username": username, "password": "p"}).encode()
    response = api().generic(
        "POST", "/api/auth/token/", body, content_type="application/json"
    )
    assert response.status_code in (400, 401), response.content
    form = {"username": username.replace("\ud800", "?"), "password": "p"}
    assert client.post("/admin/login/", form).status_code == 200
