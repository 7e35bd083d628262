"""Accounts: API tokens kept only as digests and expiring, and a brake on
password guessing under every ``authenticate()`` (the login page, the admin's
login, the token endpoint)."""

from __future__ import annotations

import hashlib
import ipaddress
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.signals import user_login_failed
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.dispatch import receiver
from django.utils import timezone

from annotator.models import ApiToken

# last_used_at is written at most this often, not on every request.
_TOUCH_EVERY = timedelta(minutes=5)
# A user name (from any address) and an address (on any user) may fail this
# many times more than one user name from one address.
_SPREAD_FACTOR = 5


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def api_token_issue(*, user) -> tuple[str, ApiToken]:
    """A new token for ``user``: the key (shown once) and its row."""
    key = secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        digest=_digest(key),
        prefix=key[:8],
        expires_at=timezone.now() + timedelta(seconds=settings.API_TOKEN_TTL_SECONDS),
    )
    return key, token


def api_token_find(key: str) -> ApiToken | None:
    """The live token with this key (its user active), else None."""
    now = timezone.now()
    token = (
        ApiToken.objects.select_related("user")
        .filter(digest=_digest(key), expires_at__gt=now)
        .first()
    )
    if token is None or not token.user.is_active:
        return None
    if token.last_used_at is None or now - token.last_used_at > _TOUCH_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


def api_token_revoke(*, token: ApiToken) -> None:
    ApiToken.objects.filter(pk=token.pk).delete()


def client_address(request) -> str:
    """The address a request came from: the peer's, or with
    TRUSTED_PROXY_COUNT proxies in front (each appending to X-Forwarded-For)
    the one the outermost of them saw. Entries left of that are the client's
    own words and never used."""
    meta = getattr(request, "META", None) or {}
    peer = meta.get("REMOTE_ADDR") or "unknown"
    hops = settings.TRUSTED_PROXY_COUNT
    if not hops:
        return peer
    chain = [hop.strip() for hop in meta.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    if len(chain) < hops:  # did not come through every proxy
        return peer
    try:
        return str(ipaddress.ip_address(chain[-hops]))
    except ValueError:
        return peer


def _keys(username: str, address: str) -> dict[str, tuple[str, int]]:
    attempts, _ = settings.LOGIN_THROTTLE_RATE
    # Exact, as ModelBackend matches names: "Ann" never logs in as "ann".
    name = hashlib.sha256(username.encode(errors="surrogatepass")).hexdigest()[:32]
    return {
        # Guessing one name from one address.
        "pair": (f"login-failures:pair:{name}:{address}", attempts),
        # Guessing one user's password from many addresses.
        "user": (f"login-failures:user:{name}", attempts * _SPREAD_FACTOR),
        # Trying many users' passwords from one address.
        "address": (f"login-failures:addr:{address}", attempts * _SPREAD_FACTOR),
    }


def login_blocked(*, request, username: str) -> int:
    """Seconds to wait before trying again: 0 when a login may be tried."""
    _, window = settings.LOGIN_THROTTLE_RATE
    for key, limit in _keys(str(username), client_address(request)).values():
        if (cache.get(key) or 0) >= limit:
            return window
    return 0


def _is_user(username: str) -> bool:
    model = get_user_model()
    return model._default_manager.filter(**{model.USERNAME_FIELD: username}).exists()


@receiver(user_login_failed)
def _count_failure(sender, credentials, request=None, **kwargs):
    # Django sends this for every failed authenticate(), whoever called it.
    _, window = settings.LOGIN_THROTTLE_RATE
    username = str(credentials.get("username") or "")
    keys = _keys(username, client_address(request))
    # Failures on names no one has count against that name and address alone:
    # a flood of made-up names from an address many users share (a proxy)
    # must not lock out a real user typing the right password.
    counted = ["pair", "user", "address"] if _is_user(username) else ["pair"]
    for kind in counted:
        key, _limit = keys[kind]
        cache.add(key, 0, timeout=window)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=window)


class ThrottledModelBackend(ModelBackend):
    """ModelBackend behind the brake, so that every caller of
    ``authenticate()`` is throttled alike, those added later included."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        if username is not None and login_blocked(request=request, username=username):
            # authenticate() stops at PermissionDenied: no backend checks the
            # password, which would tell a guesser when they are right.
            raise PermissionDenied
        return super().authenticate(
            request, username=username, password=password, **kwargs
        )
