"""Reading settings from the environment, for core's settings and each
kind's: a value that cannot be parsed fails loudly at start-up instead of
falling back to a default, so a typo in a deployment shows at once."""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

_MISSING = object()
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def env_str(name: str, default: str | object = _MISSING) -> str:
    """An empty value counts as unset (a blank line in .env)."""
    value = os.environ.get(name)
    if not value:
        if default is _MISSING:
            raise ImproperlyConfigured(f"environment variable {name} is required")
        return default  # type: ignore[return-value]
    return value


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use true/false)")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if not raw:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_endpoints(name: str) -> list[str]:
    """Base URLs, each with one port (explicit or its scheme's)."""
    urls = env_list(name, [])
    for url in urls:
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 (raises on a port that is not a number)
        except ValueError as e:
            raise ImproperlyConfigured(
                f"{name}: {url!r} is not a URL with one port (no wildcard): {e}"
            ) from e
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ImproperlyConfigured(f"{name}: {url!r} is not an http(s) URL")
    return urls


def env_key_bindings(name: str, urls: list[str]) -> dict[str, list[str]]:
    """``NAME=URL,...``: each variable with the URLs (of ``urls``) its key
    may be sent to."""
    bindings: dict[str, list[str]] = {}
    listed = {u.rstrip("/") for u in urls}
    for item in env_list(name, []):
        variable, bound, url = (part.strip() for part in item.partition("="))
        if not bound:
            if len(urls) != 1:
                raise ImproperlyConfigured(
                    f"{name}: {variable} names no endpoint; write {variable}=URL "
                    "for each endpoint its key may be sent to"
                )
            url = urls[0]
        if url.rstrip("/") not in listed:
            raise ImproperlyConfigured(
                f"{name}: {variable} is bound to {url!r}, which LLM_BASE_URLS "
                "does not list"
            )
        bindings.setdefault(variable, []).append(url)
    return bindings


def env_json_object(name: str) -> dict:
    """A JSON object, e.g. ``TRAINING_CONFIG={"human_epochs": 4}``."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError as e:
        raise ImproperlyConfigured(f"{name} is not valid JSON: {e}") from None
    if not isinstance(value, dict):
        raise ImproperlyConfigured(f"{name} must be a JSON object, not {raw!r}")
    return value


def env_prices(name: str) -> dict[str, tuple[Decimal, Decimal]]:
    """Prices per million (prompt, completion) tokens by model:
    ``gpt-4o=2.5/10,local=0/0`` (``*`` for any model not named), or a JSON
    object ``{"gpt-4o": [2.5, 10]}``."""
    raw = (os.environ.get(name) or "").strip()
    if not raw:
        return {}
    if raw.startswith("{"):
        pairs = list(env_json_object(name).items())
    else:
        pairs = []
        for item in filter(None, (i.strip() for i in raw.split(","))):
            model, _, price = item.rpartition("=")
            pairs.append((model.strip(), price.split("/")))
    prices = {}
    for model, price in pairs:
        try:
            if not isinstance(price, list) or len(price) != 2:
                raise ValueError
            if any(isinstance(p, bool) for p in price):
                raise ValueError
            prompt, completion = (Decimal(str(p).strip()) for p in price)
        except (ArithmeticError, ValueError):
            prompt = completion = Decimal("NaN")
        if (
            not model
            or not prompt.is_finite()
            or not completion.is_finite()
            or min(prompt, completion) < 0
        ):
            raise ImproperlyConfigured(
                f"{name}: {model or '(no model)'} needs two prices of 0 or more, "
                "as model=prompt/completion or a JSON object "
                '{"model": [prompt, completion]}'
            )
        prices[model] = (prompt, completion)
    return prices


_PER = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600}


def env_rate(name: str, default: str) -> tuple[int, int]:
    """A rate such as ``10/min`` as (count, window in seconds)."""
    raw = os.environ.get(name) or default
    count, _, unit = raw.partition("/")
    if not count.strip().isdigit() or unit.strip() not in _PER:
        raise ImproperlyConfigured(
            f"{name}={raw!r} is not a rate like 10/min (per s, min or hour)"
        )
    return int(count), _PER[unit.strip()]


def env_secret(name: str) -> str | None:
    """``NAME`` or the contents of the file named by ``NAME_FILE`` (Docker secrets)."""
    value = os.environ.get(name)
    path = os.environ.get(f"{name}_FILE")
    if value and path:
        raise ImproperlyConfigured(f"set {name} or {name}_FILE, not both")
    if path:
        try:
            return Path(path).read_text(encoding="utf-8").strip()
        except OSError as e:
            raise ImproperlyConfigured(f"{name}_FILE={path!r}: {e.strerror}") from e
    return value or None
