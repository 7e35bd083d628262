"""API tokens: ``Authorization: Token <key>``, issued for a user name and
password at ``/api/auth/token/``, revoked with DELETE there."""

from __future__ import annotations

from django.contrib.auth import authenticate
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import AuthenticationFailed, Throttled
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.core import accounts


class CredentialsSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150, help_text="User name.")
    password = serializers.CharField(
        max_length=4096, style={"input_type": "password"}, help_text="Password."
    )


class TokenOutSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="The key; it is shown only this once.")
    expires_at = serializers.DateTimeField(help_text="When it stops working.")


class TokenView(APIView):
    permission_classes = [IsAuthenticated]

    def get_permissions(self):
        # Revoking needs the token itself; issuing needs the password.
        return [] if self.request.method == "POST" else super().get_permissions()

    @extend_schema(
        request=CredentialsSerializer, responses={200: TokenOutSerializer}, auth=[]
    )
    def post(self, request):
        """A new API token for a user name and password. Failed attempts are
        limited (LOGIN_THROTTLE_RATE): past the limit the answer is 429."""
        payload = CredentialsSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        username = payload.validated_data["username"]
        wait = accounts.login_blocked(request=request, username=username)
        if wait:
            raise Throttled(wait, "Too many failed logins; try again later.")
        user = authenticate(
            request, username=username, password=payload.validated_data["password"]
        )
        if user is None:
            raise AuthenticationFailed("Wrong user name or password.")
        key, token = accounts.api_token_issue(user=user)
        return Response({"token": key, "expires_at": token.expires_at})

    @extend_schema(request=None, responses={204: None})
    def delete(self, request):
        """Revoke the token this request is authenticated with."""
        if not isinstance(request.auth, accounts.ApiToken):
            raise AuthenticationFailed("Send the token to revoke as Authorization.")
        accounts.api_token_revoke(token=request.auth)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ApiTokenScheme(OpenApiAuthenticationExtension):
    """Documents ApiTokenAuthentication in the OpenAPI schema."""

    target_class = "annotator.api.authentication.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return build_bearer_security_scheme_object(
            header_name="Authorization", token_prefix="Token"
        )
