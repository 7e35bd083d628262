"""``Authorization: Token <key>`` against the digests of live API tokens.

Its own module: DRF imports authentication classes while it is still loading
``rest_framework.views``, so this must not import views.
"""

from __future__ import annotations

from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed

from annotator.core import accounts


class ApiTokenAuthentication(BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword.lower().encode():
            return None
        if len(parts) != 2:
            raise AuthenticationFailed("Token header must be 'Token <key>'.")
        try:
            key = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise AuthenticationFailed("Invalid or expired token.") from None
        token = accounts.api_token_find(key)
        if token is None:
            raise AuthenticationFailed("Invalid or expired token.")
        return token.user, token

    def authenticate_header(self, request) -> str:
        return self.keyword
