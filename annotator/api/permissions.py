from rest_framework.permissions import SAFE_METHODS, BasePermission, IsAdminUser

# Admin-only endpoints (imports, extraction runs, scorers, training) use
# IsAdminUser: Django's is_staff. Annotators are plain members of projects.
__all__ = ["IsAdminOrReadOnly", "IsAdminUser"]


class IsAdminOrReadOnly(BasePermission):
    """Members read; only admins write. Visibility comes from the queryset."""

    def has_permission(self, request, view) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False
        return request.method in SAFE_METHODS or request.user.is_staff
