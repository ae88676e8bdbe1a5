"""Report URLs, mounted by a feature's urls in the `planner` namespace."""

from django.urls import path

from planner.reports import views

urlpatterns = [
    path("reports/", views.report_list, name="report_list"),
    path("reports/<int:report_id>", views.report_detail, name="report_detail"),
    path("reports/<int:report_id>/status", views.report_status, name="report_status"),
    path("reports/<int:report_id>/file", views.report_file, name="report_file"),
    path("reports/<int:report_id>/delete", views.report_delete, name="report_delete"),
]
