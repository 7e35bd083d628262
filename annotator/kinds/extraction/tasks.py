"""The extraction kind's task: its runs."""

from celery import shared_task

from annotator.kinds.extraction import extraction_runs
from annotator.tasks import LLM_RUN_TASK, llm_run


@shared_task(**LLM_RUN_TASK)
def run_extraction(self, run_id: int) -> dict:
    return llm_run(
        self,
        run_id,
        execute=extraction_runs.extraction_run_execute,
        fail=extraction_runs.extraction_run_fail,
    )
