"""SafePassage web app: projects, documents, claims, labels, scorers."""

from annotator.core.celery import app as celery_app

__all__ = ["celery_app"]
