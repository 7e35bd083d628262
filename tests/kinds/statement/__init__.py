"""A checker kind that exists only in the tests, to show what adding a kind
takes, all of it in this package: the checker (``checker``, registered on
import), and the Django app that brings its own LLM job (``models``,
``runs``, ``tasks``), setting (``settings``), endpoint (``api``, ``urls``),
hook and claim partial (``templates/claims``). The tests' settings install
it through KIND_APPS, as a deployment would its own kind."""

from tests.kinds.statement import checker  # noqa: F401  (registers the checker)
