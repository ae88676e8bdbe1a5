from django.urls import path

from planner.serving import views

urlpatterns = [
    path("serving/new", views.serving_new, name="serving_new"),
    path("serving/<int:plan_id>", views.serving_detail, name="serving_detail"),
    path("serving/<int:plan_id>/report.<str:fmt>", views.serving_report,
         name="serving_report"),
]
