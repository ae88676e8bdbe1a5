"""Capacity pages: the Capacity view of an analysed history, its status and exports."""

from django.urls import path

from planner.capacity import views

urlpatterns = [
    path("history/<int:pk>/capacity", views.capacity_detail, name="capacity_detail"),
    path("history/<int:pk>/capacity/status", views.capacity_status, name="capacity_status"),
    path("history/<int:pk>/capacity/report.<str:fmt>", views.capacity_report,
         name="capacity_report"),
    path("history/<int:pk>/capacity/delete", views.capacity_delete, name="capacity_delete"),
    path("history/<int:pk>/capacity/reports", views.capacity_report_start,
         name="capacity_report_start"),
]
