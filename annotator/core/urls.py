from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

from annotator.views import adjudication, guidelines, pages, setup

urlpatterns = [
    path("", pages.home, name="home"),
    path("projects/new/", setup.project_new, name="project-new"),
    path("projects/<int:pk>/setup/", setup.project_setup, name="project-setup"),
    path(
        "projects/<int:pk>/setup/progress/",
        setup.project_setup_progress,
        name="project-setup-progress",
    ),
    path("projects/<int:pk>/claims/", pages.claims_page, name="claims"),
    # The claims page's address in an earlier release.
    path(
        "projects/<int:pk>/predictions/",
        RedirectView.as_view(pattern_name="claims", permanent=True, query_string=True),
    ),
    path("projects/<int:pk>/label/", pages.label_page, name="label"),
    path("projects/<int:pk>/dashboard/", pages.dashboard_page, name="dashboard"),
    path(
        "projects/<int:pk>/guideline/",
        guidelines.guideline_page,
        name="guideline",
    ),
    path(
        "projects/<int:pk>/adjudicate/",
        adjudication.adjudication_page,
        name="adjudicate",
    ),
    path("login/", pages.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/", include("annotator.api.urls")),
    path("admin/", admin.site.urls),
]
