"""The statement kind's task: its runs."""

from celery import shared_task

from annotator.tasks import LLM_RUN_TASK, llm_run
from tests.kinds.statement import runs


@shared_task(**LLM_RUN_TASK)
def run_statements(self, run_id: int) -> dict:
    return llm_run(
        self,
        run_id,
        execute=runs.statement_run_execute,
        fail=runs.statement_run_fail,
    )
