from django.contrib import admin
from django.urls import include, path

from planner.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/", api.urls),
    path("", include("planner.history_urls")),
    path("", include("simulator.urls")),
    path("", include("pricing.urls")),
]
