"""The one place application errors become HTTP responses."""

from __future__ import annotations

import logging

from django.core.exceptions import ObjectDoesNotExist
from django.db import DataError, InterfaceError, OperationalError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from annotator.claims.ingest import describe_refusal
from annotator.core.errors import ApplicationError, LabelConflict, TransientError

logger = logging.getLogger(__name__)


def _is_lone_surrogate(exc) -> bool:
    # Text from a JSON body (a \ud800 escape) that has no UTF-8 encoding.
    return isinstance(exc, UnicodeEncodeError) and "surrogate" in exc.reason


def exception_handler(exc, context):
    if isinstance(exc, (OperationalError, InterfaceError)):
        # The database restarting or failing over: nothing was written, and
        # the caller (the label outbox, a pipeline) should send it again.
        logger.warning("database unavailable: %s", exc)
        return Response(
            {"detail": "The database is unavailable; send the request again."},
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": "5"},
        )
    if isinstance(exc, TransientError):
        return Response(
            {"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE
        )
    if isinstance(exc, LabelConflict):
        return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, ApplicationError):
        return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, DataError) or _is_lone_surrogate(exc):
        # A value the database refuses (NUL in a JSON field, say) or the driver
        # cannot encode, that no serializer check caught: the request's fault.
        detail = f"a value was refused by the database: {describe_refusal(exc)}"
        return Response({"detail": detail}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, ObjectDoesNotExist):
        return Response({"detail": "Not found."}, status=status.HTTP_404_NOT_FOUND)
    return drf_exception_handler(exc, context)
