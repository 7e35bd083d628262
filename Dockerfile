# One image for web, worker, beat and the GPU training worker.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    DJANGO_SETTINGS_MODULE=annotator.core.settings \
    VAR_DIR=/var/lib/safepassage \
    STATIC_ROOT=/app/staticfiles \
    STATIC_MANIFEST=true

WORKDIR /app
RUN useradd --system --create-home --home-dir /home/app app \
    && mkdir -p /var/lib/safepassage && chown app /var/lib/safepassage

COPY requirements.txt .
RUN pip install -r requirements.txt

COPY . .
# The starter scorer, trained into the image (no label; add real documents of
# your styles with --documents in a derived image).
ENV STARTER_SCORER=/app/starter
RUN python -m tools.starter_scorer --out /app/starter
# collectstatic imports settings: give it throwaway values (no database is
# touched; the broker URL is only parsed).
RUN SECRET_KEY=collectstatic-only \
    DATABASE_URL=postgres://build@localhost/build \
    CELERY_BROKER_URL=redis://localhost:6379/0 \
    python manage.py collectstatic --noinput

USER app
EXPOSE 8000
CMD ["gunicorn", "annotator.core.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
