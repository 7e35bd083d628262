"""What the citations kind brings to the app: the deployment's case law,
and its set-up page (briefs, case law), and why it cannot train without
case law."""

from annotator.kinds import KindHook
from annotator.kinds.citations.caselaw import deployment_caselaw
from annotator.kinds.citations.setup import SETUP, training_blocked

HOOK = KindHook(
    kind="citations",
    checker_options={"caselaw": lambda _project: deployment_caselaw()},
    setup=SETUP,
    training_blocked=training_blocked,
)
