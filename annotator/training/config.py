"""A training run's settings: TrainConfig from the deployment's defaults and
the run's own, checked and bounded (one training worker serves every
project), and the base a run starts from."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from django.conf import settings

from annotator.core.allowlists import scorer_source_problem
from annotator.core.errors import ApplicationError
from annotator.models import Project, ScorerModel
from pipeline.bases import best_base
from pipeline.train import TrainConfig


def train_config(
    params: dict[str, Any] | None = None, *, project: Project | None = None
):
    """TrainConfig from its defaults, settings.TRAINING_CONFIG, then ``params``
    (a run of ``project``, whose own scorer versions it may start from).

    Raises:
        ApplicationError: an unknown field or a value of the wrong type.
    """

    known = {f.name: f for f in fields(TrainConfig)}
    merged = {**settings.TRAINING_CONFIG, **(params or {})}
    if params is not None and "base" in params:
        merged["base"] = training_base(params["base"], project=project)
    if "base" not in merged:
        merged["base"] = default_base()
    unknown = sorted(set(merged) - set(known))
    if unknown:
        raise ApplicationError(
            f"unknown training parameter(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(known))}"
        )
    defaults = TrainConfig()
    values = {}
    for name, value in merged.items():
        default = getattr(defaults, name)
        if name == "stages":
            if (
                not isinstance(value, list | tuple)
                or not value
                or not set(value) <= {"silver", "human"}
            ):
                raise ApplicationError('stages: a list of "silver" and/or "human"')
            value = tuple(value)
        elif value is None:
            if name not in _NULLABLE:
                raise ApplicationError(f"{name}: may not be null")
        elif not _same_type(value, default):
            expected = "str" if name == "device" else type(default).__name__
            raise ApplicationError(f"{name}: expected {expected}, got {value!r}")
        elif name in _LIMITS and not _LIMITS[name][0] <= value <= _LIMITS[name][1]:
            low, high = _LIMITS[name]
            raise ApplicationError(f"{name}: {value!r} is not in [{low}, {high}]")
        values[name] = value
    return TrainConfig(**values)


def training_base(value: Any, *, project: Project | None) -> str:
    """The model a run's ``base`` names. The base is loaded from disk or a
    hub, so a web user picks among the deployment's models and shared folders,
    or names one of the project's own scorer versions by id: never by path,
    as every project's folders are predictable (settings.TRAINING_CONFIG is
    trusted and never comes here).

    Raises:
        ApplicationError: anything else, another project's version included.
    """
    if isinstance(value, str):
        problem = scorer_source_problem(value)
        if problem:
            raise ApplicationError(f"base: {problem}")
        return value
    if not isinstance(value, int) or isinstance(value, bool):
        raise ApplicationError(
            f"base: {value!r} is neither a model name, a folder nor a scorer id "
            "(an integer)"
        )
    # An id out of bigint's range would be a database error, not a miss.
    scorer = None
    if project is not None and 0 < value < 2**63:
        scorer = ScorerModel.objects.filter(project=project, pk=value).first()
    if scorer is None:
        # The same answer for another project's id: ids are not disclosed.
        raise ApplicationError(f"base: this project has no scorer version {value}")
    problem = scorer_source_problem(scorer.path, project_id=scorer.project_id)
    if problem:
        raise ApplicationError(f"base: scorer {scorer.version}: {problem}")
    return scorer.path


def default_base() -> str:
    """The best base the deployment has (:func:`pipeline.bases.best_base`
    over its settings): the starter once it is built."""

    base, _ = best_base(
        {
            "STARTER_SCORER": str(settings.STARTER_SCORER),
            "NLI_BASE": str(settings.NLI_BASE),
            "NLI_MODEL": settings.NLI_MODEL,
        }
    )
    return base


# No unlimited silver (a null silver_limit): one training worker serves every
# project, so epochs, length and silver pairs are bounded by the deployment.
_NULLABLE = {"device"}
_LIMITS: dict[str, tuple[float, float]] = {
    "silver_epochs": (0, settings.TRAINING_MAX_EPOCHS),
    "human_epochs": (0, settings.TRAINING_MAX_EPOCHS),
    "patience": (1, settings.TRAINING_MAX_EPOCHS),
    "batch_size": (1, 512),
    "learning_rate": (1e-8, 1.0),
    "max_length": (8, settings.TRAINING_MAX_LENGTH),
    "validation_share": (0.01, 0.9),
    "silver_flag_precision": (0.0, 1.0),
    "silver_limit": (0, settings.TRAINING_MAX_SILVER_LIMIT),
    "replay": (0.0, 100.0),
}


def _same_type(value: Any, default: Any) -> bool:
    if isinstance(value, bool) or isinstance(default, bool):
        return isinstance(value, bool) and isinstance(default, bool)
    if default is None:  # device
        return isinstance(value, str)
    if isinstance(default, float):
        return isinstance(value, int | float)
    return isinstance(value, type(default))
