"""A checker that exists only in the tests, to show what adding a kind takes:
this subpackage (the checker, registered on import), a ``Project.kind`` value
(the registry gives it) and a claim/evidence partial (``templates/claims``)."""

from pathlib import Path

#: Where its claim partial lives; the tests add it to the template folders.
TEMPLATES = Path(__file__).parent / "templates"
