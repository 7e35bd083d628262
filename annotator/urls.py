from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from . import adjudication_views, guideline_views, setup_views, views

urlpatterns = [
    path("", views.home, name="home"),
    path("projects/new/", setup_views.project_new, name="project-new"),
    path("projects/<int:pk>/setup/", setup_views.project_setup, name="project-setup"),
    path(
        "projects/<int:pk>/setup/progress/",
        setup_views.project_setup_progress,
        name="project-setup-progress",
    ),
    path("projects/<int:pk>/predictions/", views.predictions_page, name="predictions"),
    path("projects/<int:pk>/label/", views.label_page, name="label"),
    path("projects/<int:pk>/dashboard/", views.dashboard_page, name="dashboard"),
    path(
        "projects/<int:pk>/guideline/",
        guideline_views.guideline_page,
        name="guideline",
    ),
    path(
        "projects/<int:pk>/adjudicate/",
        adjudication_views.adjudication_page,
        name="adjudicate",
    ),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/", include("annotator.api.urls")),
    path("admin/", admin.site.urls),
]
