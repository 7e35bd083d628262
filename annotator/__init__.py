"""SafePassage web app: projects, documents, predictions, labels, scorers."""

from annotator.core.celery import app as celery_app

__all__ = ["celery_app"]
