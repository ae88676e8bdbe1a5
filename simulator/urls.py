from django.urls import path

from simulator import views

app_name = "simulator"
urlpatterns = [
    path("simulations/new", views.simulation_new, name="new"),
    path("simulations/<int:run_id>", views.simulation_detail, name="detail"),
    path("simulations/<int:run_id>/status", views.simulation_status, name="status"),
]
