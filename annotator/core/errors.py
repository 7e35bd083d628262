"""Application errors, in terms a user can act on.

``api/errors.py`` turns them into HTTP responses; the tasks decide from them
whether to retry (TransientError) or record the failure on the run.
"""

from __future__ import annotations


class ApplicationError(Exception):
    """An error the caller can act on; the API maps it to 400."""


class ConfigurationError(ApplicationError):
    """A project or deployment setting makes the work impossible (permanent)."""


class TransientError(ApplicationError):
    """The work may succeed later (network, rate limit); tasks retry it."""


class ItemInvalid(ApplicationError):
    """An item sent to be checked that does not parse; the message names the
    field."""


class LabelInvalid(ApplicationError):
    """A label that cannot be stored as sent."""


class GuidelineInvalid(ApplicationError):
    """Guideline text that cannot be saved; the message says why."""


class LabelConflict(ApplicationError):
    """The client_id was used for another label (of another expert, or of
    another claim). The message says nothing about that label."""
