from django.urls import path

from pricing import views

app_name = "pricing"
urlpatterns = [
    path("", views.catalog, name="catalog"),
]
