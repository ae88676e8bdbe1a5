from django.urls import path

from simulator import views
from simulator.calibration import views as own

app_name = "simulator"
urlpatterns = [
    path("simulations/", views.simulation_list, name="list"),
    path("simulations/new", views.simulation_new, name="new"),
    path("simulations/accuracy", views.simulation_accuracy, name="accuracy"),
    path("simulations/accuracy.csv", views.simulation_accuracy_csv, name="accuracy_csv"),
    path("simulations/<int:run_id>", views.simulation_detail, name="detail"),
    path("simulations/<int:run_id>/status", views.simulation_status, name="status"),
    path("simulations/<int:run_id>/delete", views.simulation_delete, name="delete"),
    path("simulations/runs", own.measured_runs, name="runs"),
    path("simulations/runs/template.csv", own.measured_runs_template, name="runs_template"),
    path("simulations/runs/fit", own.measured_runs_fit, name="runs_fit"),
    path("simulations/runs/fit/<int:fit_id>/status", own.measured_runs_fit_status,
         name="runs_fit_status"),
    path("simulations/runs/shipped", own.measured_runs_use_shipped, name="runs_shipped"),
    path("simulations/runs/delete", own.measured_runs_delete, name="runs_delete"),
]
