"""Purchase-mix pages: upload a job history, analyse it, see the recommended mix."""

from django.urls import path

from planner.purchase_mix import views

urlpatterns = [
    path("history/", views.history_list, name="history_list"),
    path("history/upload", views.history_upload, name="history_upload"),
    path("history/<int:pk>", views.history_detail, name="history_detail"),
    path("history/<int:pk>/runs", views.history_run_create, name="history_run_create"),
    path("history/<int:pk>/delete", views.history_delete, name="history_delete"),
    path("history/<int:pk>/status", views.history_status, name="history_status"),
    path("history/<int:pk>/report.<str:fmt>", views.history_report, name="history_report"),
    path("history/<int:pk>/reports", views.history_report_start, name="history_report_start"),
]
