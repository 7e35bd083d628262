"""What the statement kind brings to the app: its runs' endpoints."""

from annotator.kinds import KindHook
from tests.kinds.statement.checker import KIND

HOOK = KindHook(kind=KIND, api_urls="tests.kinds.statement.urls")
