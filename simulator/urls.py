from django.urls import path

from simulator import views
from simulator.calibration import views as calibration_views

app_name = "simulator"
urlpatterns = [
    path("simulations/new", views.simulation_new, name="new"),
    path("simulations/<int:run_id>", views.simulation_detail, name="detail"),
    path("simulations/<int:run_id>/status", views.simulation_status, name="status"),
    path("simulations/runs", calibration_views.measured_runs, name="runs"),
    path("simulations/runs/template.csv", calibration_views.measured_runs_template, name="runs_template"),
    path("simulations/runs/fit", calibration_views.measured_runs_fit, name="runs_fit"),
    path("simulations/runs/shipped", calibration_views.measured_runs_use_shipped, name="runs_shipped"),
    path("simulations/runs/delete", calibration_views.measured_runs_delete, name="runs_delete"),
]
