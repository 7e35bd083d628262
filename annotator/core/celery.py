"""The Celery app: one app, three queues.

- ``llm``: calls to the LLM provider (slow, rate limited, network bound)
- ``pipeline``: alignment and NLI scoring (CPU, or a GPU when present)
- ``training``: fine-tuning scorers (a GPU worker where there is one)
"""

import os

from celery import Celery
from kombu import Exchange, Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.core.settings")

app = Celery("annotator")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Each queue its own exchange and key: queues sharing the default exchange and
# key would each get a copy of every message.
app.conf.task_queues = tuple(
    Queue(name, Exchange(name, type="direct"), routing_key=name)
    for name in ("llm", "pipeline", "training")
)
app.conf.task_routes = {
    # Every LLM run's task, a kind's own too (``annotator.tasks.LLM_RUN_TASK``).
    "*.tasks.run_*": {"queue": "llm"},
    "annotator.tasks.check_claims": {"queue": "pipeline"},
    "annotator.tasks.sweep_unchecked": {"queue": "pipeline"},
    "annotator.tasks.sweep_llm_runs": {"queue": "pipeline"},
    "annotator.tasks.retrain_due": {"queue": "pipeline"},
    # A short call out of the server, like the LLM calls.
    "annotator.tasks.deliver_webhook": {"queue": "llm"},
    # GPU workers where there are any (docker-compose --profile gpu); the
    # trainer uses CUDA when the worker has it, the CPU otherwise.
    "annotator.tasks.train_scorer": {"queue": "training"},
}
app.autodiscover_tasks()
