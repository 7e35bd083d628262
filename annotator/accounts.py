"""Accounts: API tokens kept only as digests and expiring, and a brake on
password guessing shared by the login page and the token endpoint."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.core.cache import cache
from django.dispatch import receiver
from django.utils import timezone

from .models import ApiToken

# last_used_at is written at most this often, not on every request.
_TOUCH_EVERY = timedelta(minutes=5)
# An address may fail this many times more than one user name.
_ADDRESS_FACTOR = 5


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


def _keys(username: str, address: str) -> list[tuple[str, int]]:
    attempts, _ = settings.LOGIN_THROTTLE_RATE
    name = hashlib.sha256(username.lower().encode()).hexdigest()[:32]
    return [
        (f"login-failures:user:{name}", attempts),
        (f"login-failures:addr:{address}", attempts * _ADDRESS_FACTOR),
    ]


def _address(request) -> str:
    return (request.META.get("REMOTE_ADDR") if request else None) or "unknown"


def login_blocked(*, request, username: str) -> int:
    """Seconds to wait before trying again: 0 when a login may be tried."""
    _, window = settings.LOGIN_THROTTLE_RATE
    for key, limit in _keys(username, _address(request)):
        if (cache.get(key) or 0) >= limit:
            return window
    return 0


@receiver(user_login_failed)
def _count_failure(sender, credentials, request=None, **kwargs):
    # Django sends this for every failed authenticate(): the page's form and
    # the token endpoint alike.
    _, window = settings.LOGIN_THROTTLE_RATE
    username = str(credentials.get("username") or "")
    for key, _limit in _keys(username, _address(request)):
        cache.add(key, 0, timeout=window)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=window)
