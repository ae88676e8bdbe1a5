from django.urls import path

from planner.storage import views

urlpatterns = [
    path("storage/", views.storage_whatif, name="storage_whatif"),
]
