from django.urls import path

from planner.plans import views
from planner.reports.urls import urlpatterns as report_urls

urlpatterns = [
    path("plans/", views.plan_list, name="plan_list"),
    path("plans/new", views.plan_new, name="plan_new"),
    path("plans/whatif", views.plan_whatif, name="plan_whatif"),
    path("plans/whatif/save", views.plan_whatif_save, name="plan_whatif_save"),
    path("plans/compare", views.plan_compare, name="plan_compare"),
    path("plans/<int:scenario_id>", views.plan_detail, name="plan_detail"),
    path("plans/<int:scenario_id>/status", views.plan_status, name="plan_status"),
    path("plans/<int:scenario_id>/save", views.plan_save, name="plan_save"),
    path("plans/<int:scenario_id>/duplicate", views.plan_duplicate, name="plan_duplicate"),
    path("plans/<int:scenario_id>/delete", views.plan_delete, name="plan_delete"),
    path("plans/<int:scenario_id>/report.<str:fmt>", views.plan_report, name="plan_report"),
    path("plans/<int:scenario_id>/reports", views.plan_report_start, name="plan_report_start"),
    # The user's reports (of plans and purchase-mix analyses alike).
    *report_urls,
]
