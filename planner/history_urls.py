"""Job-history pages and sign-up (included from planner.urls)."""

from django.urls import path

from planner import views
from planner.plans.urls import urlpatterns as plan_urlpatterns

app_name = "planner"
urlpatterns = [
    path("accounts/signup/", views.signup, name="signup"),
    path("history/", views.history_list, name="history_list"),
    path("history/upload", views.history_upload, name="history_upload"),
    path("history/<int:pk>", views.history_detail, name="history_detail"),
    path("history/<int:pk>/runs", views.history_run_create, name="history_run_create"),
    path("history/<int:pk>/status", views.history_status, name="history_status"),
]

urlpatterns += plan_urlpatterns
