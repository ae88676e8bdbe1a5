from django.urls import path

from planner.serving import views

urlpatterns = [
    path("serving/", views.serving_list, name="serving_list"),
    path("serving/new", views.serving_new, name="serving_new"),
    path("serving/whatif", views.serving_whatif, name="serving_whatif"),
    path("serving/whatif/save", views.serving_whatif_save, name="serving_whatif_save"),
    path("serving/<int:plan_id>", views.serving_detail, name="serving_detail"),
    path("serving/<int:plan_id>/report.<str:fmt>", views.serving_report,
         name="serving_report"),
    path("serving/<int:plan_id>/delete", views.serving_delete, name="serving_delete"),
]
