"""Response headers every page gets."""

from django.conf import settings


class ContentSecurityPolicyMiddleware:
    """Sends CONTENT_SECURITY_POLICY, so that text which slipped past escaping
    into a page still cannot run script or load from elsewhere."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault(
            "Content-Security-Policy", settings.CONTENT_SECURITY_POLICY
        )
        return response
