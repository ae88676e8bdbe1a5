from django.urls import path

from pricing import views

app_name = "pricing"
urlpatterns = [
    path("gpus/", views.catalog, name="catalog"),
    path("compare/", views.compare, name="compare"),
    path("prices/", views.prices, name="prices"),
    path("prices/columns", views.prices_columns, name="prices_columns"),
    # `path` keeps any instance name routable: GCP names hold '+' (n1-highmem-8+1xT4).
    path("instances/<slug:provider>/<path:name>/", views.instance, name="instance"),
]
