from django.urls import path

from planner.serving import views

urlpatterns = [
    path("serving/", views.serving_list, name="serving_list"),
    path("serving/new", views.serving_new, name="serving_new"),
    path("serving/<int:plan_id>", views.serving_detail, name="serving_detail"),
    path("serving/<int:plan_id>/report.<str:fmt>", views.serving_report,
         name="serving_report"),
    path("serving/<int:plan_id>/delete", views.serving_delete, name="serving_delete"),
]
