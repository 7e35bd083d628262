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
class SetupPage:
    """A kind's steps on its projects' set-up page, before the annotators':
    what to upload, in which format, with sample files to download.

    ``template`` is included with ``context(project, user)`` as
    ``kind_setup``; ``actions``: the forms it posts, by their ``action``
    name, each ``handler(request, project)`` returning what the page shows
    of its outcome (as the shared upload actions do); ``samples``: the
    sample files offered, what each is by its static path.
    """

    template: str
    context: Callable[[Any, Any], dict[str, Any]] | None = None
    actions: Mapping[str, Callable[[Any, Any], dict[str, Any]]] = field(
        default_factory=dict
    )
    samples: Mapping[str, str] = field(default_factory=dict)


#: The set-up steps of a kind that brings none: documents, then claims.
DOCUMENTS_AND_CLAIMS = SetupPage(template="setup/documents_claims.html")


@dataclass(frozen=True)
class ProjectOption:
    """A setting a kind adds to its projects, kept in ``Project.options``.

    ``default`` makes its value for a project that has none; ``clean`` takes
    a value sent and returns it as stored, or raises :class:`ValueError`
    naming the problem; ``help`` says what it is; ``rechecks``: a change can
    turn a verdict already given, so every claim is checked again.
    """

    default: Callable[[], Any]
    clean: Callable[[Any], Any]
    help: str
    rechecks: bool = False


@dataclass(frozen=True)
class KindHook:
    """What a checker kind brings to the app.

    ``checker_options``: the options its checker is built with, each made
    from the project only when a check needs it (a case-law store, say).
    ``project_options``: the settings it adds to its projects.
    ``evidence_threshold``: the project option its evidence scores are kept
    at (an alignment threshold), which the dashboard marks and the
    disagreement queue ranks claims near; None where there is none.
    ``claim_display``: for a project, how the labeling page names one of
    its claims (a claim record): ``type_display``, ``value_display`` and the
    ``hypothesis`` shown until the check stores one; by default its type, its
    value as text and the statement its claim data makes.
    ``labeling_page``: what the labeling page's script gets of a project
    beside the shared fields (an extraction project's entity types, offered
    as corrections).
    ``api_urls``: the module of its endpoints, under ``/api/``.
    ``dashboard``: its panels on the project dashboard.
    ``setup``: its steps on the set-up page.
    ``training_blocked``: why a project cannot train a scorer yet (no case
    law to read the cited passages from, say), or None; a run is refused
    with that reason, and no first-scorer run is started.
    """

    kind: str
    checker_options: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    project_options: Mapping[str, ProjectOption] = field(default_factory=dict)
    evidence_threshold: str | None = None
    claim_display: Callable[[Any], Callable[[Any], dict[str, str]]] | None = None
    labeling_page: Callable[[Any], dict[str, Any]] | None = None
    api_urls: str | None = None
    dashboard: DashboardPanels | None = None
    setup: SetupPage = DOCUMENTS_AND_CLAIMS
    training_blocked: Callable[[Any], str | None] | None = None

    def options_cleaned(self, sent: Any, stored: Mapping[str, Any]) -> dict[str, Any]:
        """``stored`` options with those ``sent`` checked and put in, every
        option this kind has filled in (its default where none is stored).

        Raises:
            ValueError: naming the option and its problem.
        """
        if not isinstance(sent, dict):
            raise ValueError("options must be an object")
        if unknown := sorted(set(sent) - set(self.project_options)):
            known = ", ".join(sorted(self.project_options)) or "none"
            raise ValueError(
                f"{self.kind} projects have no option {', '.join(unknown)} "
                f"(theirs: {known})"
            )
        options = {k: v for k, v in stored.items() if k in self.project_options}
        for name, option in self.project_options.items():
            if name in sent:
                try:
                    options[name] = option.clean(sent[name])
                except ValueError as e:
                    raise ValueError(f"option {name}: {e}") from e
            elif name not in options:
                options[name] = option.default()
        return options


class KindConfig(AppConfig):
    """The Django app of a checker kind; ``kind`` is the checker's name
    (``pipeline.checkers.kinds()``). A kind's ``apps`` module subclasses it
    as ``kinds.KindConfig``: a class imported there by name would be a
    second config for Django to choose from."""

    kind: str
    #: The kind of a project made without one (one kind says so; not
    #: ``default``, which tells Django which config of a module to use).
    default_kind: bool = False
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


def default_kind() -> str:
    """The kind of a project made without one: the installed kind whose app
    says it is the default, else the first installed."""
    configs = [c for c in apps.get_app_configs() if isinstance(c, KindConfig)]
    return next((c.kind for c in configs if c.default_kind), configs[0].kind)


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
