"""Request parsers: limits that hold before a byte of the body is parsed."""

from __future__ import annotations

import io

from django.conf import settings
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser, MultiPartParser


class UploadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The upload is too large."
    default_code = "upload_too_large"


def upload_limit_check(size: int) -> None:
    """UploadTooLarge when ``size`` bytes are over MAX_UPLOAD_BYTES."""
    if size > settings.MAX_UPLOAD_BYTES:
        raise UploadTooLarge(
            f"{size} bytes sent, over the limit of {settings.MAX_UPLOAD_BYTES} "
            "bytes (MAX_UPLOAD_BYTES); split the upload"
        )


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser, with JSON nested past Python's recursion limit a 400
    instead of a RecursionError (a 500)."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply") from None


class BodyTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "body_too_large"


class LimitedJSONParser(BoundedJSONParser):
    """JSON bodies up to the number of bytes the setting ``limit_setting``
    names: refused from their Content-Length before they are read, and from
    what arrives when a body comes without one."""

    limit_setting = ""
    what = "send less"

    def parse(self, stream, media_type=None, parser_context=None):
        limit = getattr(settings, self.limit_setting)
        meta = parser_context["request"].META
        try:
            length = int(meta.get("CONTENT_LENGTH") or 0)
        except ValueError:
            raise ParseError("Content-Length is not a number") from None
        if length > limit:
            self._refuse(f"{length} bytes sent,", limit)
        body = b"" if stream is None else stream.read(limit + 1)
        if len(body) > limit:
            self._refuse("the body is", limit)
        return super().parse(io.BytesIO(body), media_type, parser_context)

    def _refuse(self, sent: str, limit: int):
        raise BodyTooLarge(
            f"{sent} over the limit of {limit} bytes ({self.limit_setting}); "
            f"{self.what}"
        )


class UploadParser(MultiPartParser):
    """Multipart uploads refused from their Content-Length, before the body is
    read or spooled to disk. The upload views check the files' sizes again
    after parsing, in case a proxy passed a body without a length."""

    def parse(self, stream, media_type=None, parser_context=None):
        meta = parser_context["request"].META
        try:
            length = int(meta.get("CONTENT_LENGTH") or 0)
        except ValueError:
            raise ParseError("Content-Length is not a number") from None
        upload_limit_check(length)
        return super().parse(stream, media_type, parser_context)
