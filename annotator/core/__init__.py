"""What every part of the app stands on: settings, the Celery app, URLs,
errors, dispatch, locks, allow-lists and the embedded Postgres and Redis."""
