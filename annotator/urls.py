from django.contrib import admin
from django.urls import include, path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("projects/<int:pk>/predictions/", views.predictions_page, name="predictions"),
    path("api/", include("annotator.api.urls")),
    path("admin/", admin.site.urls),
]
