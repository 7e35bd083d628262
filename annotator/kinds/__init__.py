"""Checker kinds on the app side: one Django app per kind.

A kind's package (``annotator/kinds/<kind>/``, or any app a deployment or a
test lists) is a Django app whose config is a :class:`KindConfig`, so its
models, admin, management commands, templates and tasks are found as any
app's. Its ``hook`` module's ``HOOK`` says what core code may ask of it, and
its ``settings`` module adds its settings to the deployment's. Core code
reads kinds only through :func:`kind_hook` and :func:`kind_hooks`, and names
none (``tests/test_import_contract.py``).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.apps import AppConfig, apps
from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from pipeline.checkers import kinds as checker_kinds


@dataclass(frozen=True)
class DashboardPanels:
    """A kind's panels on its projects' dashboard: ``template`` is included
    with ``context(project)`` as ``panel``; ``script``, a static ES module,
    drives them."""

    template: str
    context: Callable[[Any], dict[str, Any]]
    script: str | None = None


@dataclass(frozen=True)
class KindHook:
    """What a checker kind brings to the app.

    ``checker_options``: the deployment's options its checker is built with,
    each made only when a check needs it (a case-law store, say).
    ``api_urls``: the module of its endpoints, under ``/api/``.
    ``dashboard``: its panels on the project dashboard.
    """

    kind: str
    checker_options: Mapping[str, Callable[[], Any]] = field(default_factory=dict)
    api_urls: str | None = None
    dashboard: DashboardPanels | None = None


class KindConfig(AppConfig):
    """The Django app of a checker kind; ``kind`` is the checker's name
    (``pipeline.checkers.kinds()``). A kind's ``apps`` module subclasses it
    as ``kinds.KindConfig``: a class imported there by name would be a
    second config for Django to choose from."""

    kind: str
    default_auto_field = "django.db.models.BigAutoField"

    def hook(self) -> KindHook:
        """The ``HOOK`` of the app's ``hook`` module; an empty one if none."""
        module = _optional_module(f"{self.name}.hook")
        return module.HOOK if module else KindHook(kind=self.kind)


def kind_apps() -> list[str]:
    """The apps of the kinds packaged here: each package with an ``apps``
    module (read by the settings, before Django has its apps)."""
    return [
        f"{__name__}.{info.name}"
        for info in pkgutil.iter_modules(__path__)
        if info.ispkg and (Path(__path__[0]) / info.name / "apps.py").is_file()
    ]


def kind_settings(app: str) -> dict[str, Any]:
    """The settings a kind's app adds: the upper-case names of its
    ``settings`` module (none if it has none). A ``KIND_APPS`` entry that
    cannot be imported stops the settings with its name."""
    try:
        importlib.import_module(app)
    except ImportError as e:
        raise ImproperlyConfigured(
            f"KIND_APPS: {app!r} cannot be imported ({e})"
        ) from e
    module = _optional_module(f"{app}.settings")
    return {k: v for k, v in vars(module).items() if k.isupper()} if module else {}


def kind_hooks() -> dict[str, KindHook]:
    """Every installed kind's hook, by kind."""
    return {
        config.kind: config.hook()
        for config in apps.get_app_configs()
        if isinstance(config, KindConfig)
    }


def kind_hook(kind: str) -> KindHook:
    """The hook of ``kind``; an empty one for a kind that brings nothing."""
    return kind_hooks().get(kind) or KindHook(kind=kind)


@checks.register(checks.Tags.compatibility)
def kind_apps_check(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """Each ``KIND_APPS`` entry is a kind's app (its config a
    :class:`KindConfig`) naming a registered checker: otherwise its hook,
    models and endpoints would be silently missing."""
    known = set(checker_kinds())
    configs = {config.name: config for config in apps.get_app_configs()}
    errors: list[checks.CheckMessage] = []
    for name in settings.KIND_APPS:
        config = configs.get(name)
        if not isinstance(config, KindConfig):
            errors.append(
                checks.Error(
                    f"KIND_APPS: {name!r} is not a checker kind's app",
                    hint="Its apps.py config must subclass annotator.kinds.KindConfig.",
                    id="annotator.E001",
                )
            )
        elif config.kind not in known:
            errors.append(
                checks.Error(
                    f"KIND_APPS: {name!r} names kind {config.kind!r}, which no "
                    "registered checker has",
                    hint=f"Registered: {', '.join(sorted(known))}.",
                    id="annotator.E002",
                )
            )
    return errors


def _optional_module(name: str):
    """Module ``name``, or None where it does not exist (an import error
    inside it is raised)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name != name:
            raise
        return None
