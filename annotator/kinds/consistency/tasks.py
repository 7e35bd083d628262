"""The consistency kind's task: its runs, sampling or corrections."""

from celery import shared_task

from annotator.kinds.consistency import consistency_runs
from annotator.tasks import LLM_RUN_TASK, llm_run


@shared_task(**LLM_RUN_TASK)
def run_consistency(self, run_id: int) -> dict:
    return llm_run(
        self,
        run_id,
        execute=consistency_runs.consistency_run_execute,
        fail=consistency_runs.consistency_run_fail,
    )
