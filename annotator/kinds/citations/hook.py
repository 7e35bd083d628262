"""What the citations kind brings to the app: the deployment's case law."""

from annotator.kinds import KindHook
from annotator.kinds.citations.caselaw import deployment_caselaw

HOOK = KindHook(
    kind="citations", checker_options={"caselaw": lambda _project: deployment_caselaw()}
)
