"""What a project may point the server at. LLM endpoints, API-key variable
names and scorer folders reach the server's secrets and files, so they are
chosen from lists the deployment fixes in its environment (settings
LLM_BASE_URLS, LLM_API_KEY_ENVS, SCORER_ROOTS, SCORER_MODELS), never taken
as free text. Each check returns the problem or None: model validators turn
it into a form error, workers into a configuration failure of the run, for
rows written before the lists existed."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError


def _listed(values: list[str]) -> str:
    return ", ".join(values) if values else "none"


def _url_allowed(url: str, allowed: str) -> bool:
    """Equal up to a trailing slash; ``*`` as the allowed URL's port stands
    for any port (a local server whose port is picked at start-up)."""
    url, allowed = url.rstrip("/"), allowed.rstrip("/")
    if url == allowed:
        return True
    host, sep, rest = allowed.partition(":*")
    if not sep:
        return False
    given = urlsplit(url)
    pattern = urlsplit(host + rest)
    return (given.scheme, given.hostname, given.path) == (
        pattern.scheme,
        pattern.hostname,
        pattern.path,
    ) and given.port is not None


def llm_base_url_problem(url: str) -> str | None:
    if url and not any(_url_allowed(url, a) for a in settings.LLM_BASE_URLS):
        return (
            f"LLM endpoint {url!r} is not allowed here; the deployment allows "
            f"{_listed(settings.LLM_BASE_URLS)} (LLM_BASE_URLS)"
        )
    return None


def llm_api_key_env_problem(name: str) -> str | None:
    if name and name not in settings.LLM_API_KEY_ENVS:
        return (
            f"API key variable {name!r} is not allowed here; the deployment "
            f"allows {_listed(settings.LLM_API_KEY_ENVS)} (LLM_API_KEY_ENVS)"
        )
    return None


def trained_scorers_root() -> Path:
    """Where training writes new scorer versions; always allowed."""
    return settings.VAR_DIR / "scorers"


def scorer_source_problem(source: str) -> str | None:
    """A scorer (or training base) is a model name the deployment lists, or a
    folder inside one of its scorer roots or the trained scorers' folder."""
    if source in settings.SCORER_MODELS:
        return None
    path = Path(source)
    if path.is_absolute():
        resolved = path.resolve()
        roots = [*settings.SCORER_ROOTS, trained_scorers_root().resolve()]
        if any(resolved.is_relative_to(root) for root in roots):
            return None
    return (
        f"scorer {source!r} is neither a model the deployment lists "
        f"({_listed(settings.SCORER_MODELS)}: SCORER_MODELS) nor a folder "
        "inside SCORER_ROOTS"
    )


def _raise(message: str | None) -> None:
    if message:
        raise ValidationError(message)


def validate_llm_base_url(value: str) -> None:
    _raise(llm_base_url_problem(value))


def validate_llm_api_key_env(value: str) -> None:
    _raise(llm_api_key_env_problem(value))


def validate_scorer_source(value: str) -> None:
    _raise(scorer_source_problem(value))
