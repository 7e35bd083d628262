"""What a project may point the server at. LLM endpoints, API-key variable
names and scorer folders reach the server's secrets and files, so they are
chosen from lists the deployment fixes in its environment (settings
LLM_BASE_URLS, LLM_API_KEY_ENVS, SCORER_ROOTS, SCORER_MODELS), never taken
as free text. Each check returns the problem or None: model validators turn
it into a form error, workers into a configuration failure of the run, for
rows written before the lists existed."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError

_DEFAULT_PORTS = {"http": 80, "https": 443}


def _listed(values) -> str:
    return ", ".join(values) if values else "none"


def endpoint(url: str) -> tuple[str, str, int, str] | None:
    """Scheme, host, port (the scheme's when none is written) and path: two
    URLs with the same endpoint reach the same server. None for what is no
    plain http(s) URL: credentials, a query or a fragment could make one
    listed URL say something else."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if (
        parts.scheme not in _DEFAULT_PORTS
        or not parts.hostname
        or parts.username is not None
        or parts.query
        or parts.fragment
    ):
        return None
    return (
        parts.scheme,
        parts.hostname.lower(),
        _DEFAULT_PORTS[parts.scheme] if port is None else port,
        parts.path.rstrip("/"),
    )


def _among(url: str, allowed: list[str]) -> bool:
    given = endpoint(url)
    return given is not None and given in {endpoint(a) for a in allowed}


def llm_base_url_problem(url: str) -> str | None:
    if url and not _among(url, settings.LLM_BASE_URLS):
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


def llm_key_binding_problem(name: str, url: str) -> str | None:
    """A key goes only to the endpoints the deployment bound it to: two
    allowed endpoints (or two ports of one host) do not share keys. A name
    outside the list is llm_api_key_env_problem's to say."""
    bound = settings.LLM_API_KEY_ENVS.get(name)
    if bound is None or _among(url, bound):
        return None
    return (
        f"API key variable {name!r} may only be sent to {_listed(bound)}, "
        f"not to {url or 'no endpoint'!r} (LLM_API_KEY_ENVS)"
    )


def llm_settings_problem(url: str, name: str) -> str | None:
    """Every check of a project's endpoint and key, for the worker: rows
    written before a rule, or the lists narrowed since."""
    return (
        llm_base_url_problem(url)
        or llm_api_key_env_problem(name)
        or llm_key_binding_problem(name, url)
    )


def trained_scorers_root() -> Path:
    """Where training writes every project's scorer versions."""
    return settings.VAR_DIR / "scorers"


def project_scorers_dir(project_id: int) -> Path:
    """Where training writes one project's scorer versions: no other
    project's scorer reads from or serves this folder."""
    return trained_scorers_root() / f"project-{project_id}"


def scorer_folder_owner(source: str) -> int | None:
    """The project whose trained versions' folder holds ``source``, if any."""
    path = Path(source)
    root = trained_scorers_root().resolve()
    if not path.is_absolute():
        return None
    path = path.resolve()
    if not path.is_relative_to(root) or path == root:
        return None
    match = re.fullmatch(r"project-(\d+)", path.relative_to(root).parts[0])
    return int(match.group(1)) if match else None


def _shared_roots() -> list[Path]:
    # The starter scorer every project trains from is shared by definition.
    return [*settings.SCORER_ROOTS, Path(settings.STARTER_SCORER).resolve()]


def scorer_source_problem(source: str, *, project_id: int | None = None) -> str | None:
    """A scorer is a model name the deployment lists, a folder inside one of
    its shared roots (SCORER_ROOTS, the starter scorer), or a folder training
    wrote for ``project_id``; never a folder of another project's versions,
    whatever root holds it."""
    if source in settings.SCORER_MODELS:
        return None
    path = Path(source)
    if path.is_absolute():
        owner = scorer_folder_owner(source)
        resolved = path.resolve()
        # A folder holding the trained scorers' folder holds every project's.
        holds_all = trained_scorers_root().resolve().is_relative_to(resolved)
        if owner is None and not holds_all:
            if any(resolved.is_relative_to(root) for root in _shared_roots()):
                return None
        elif owner is not None and owner == project_id:
            return None
    return (
        f"scorer {source!r} is neither a model the deployment lists "
        f"({_listed(settings.SCORER_MODELS)}: SCORER_MODELS) nor a folder "
        "inside SCORER_ROOTS; a version trained for a project is named by its "
        "id, and only within that project"
    )


def _raise(message: str | None) -> None:
    if message:
        raise ValidationError(message)


def validate_llm_base_url(value: str) -> None:
    _raise(llm_base_url_problem(value))


def validate_llm_api_key_env(value: str) -> None:
    _raise(llm_api_key_env_problem(value))


def validate_scorer_source(value: str) -> None:
    # A field cannot see its row's project: ScorerModel.clean checks that a
    # trained folder is that project's own.
    _raise(scorer_source_problem(value, project_id=scorer_folder_owner(value)))
