"""Root URLs. The planning features share the `planner` namespace (stable URL names)."""

from django.conf import settings
from django.contrib import admin
from django.contrib.auth.views import LoginView
from django.urls import include, path

from planner import accounts, health, home
from planner.api import api, api_index
from planner.capacity.urls import urlpatterns as capacity_urls
from planner.plans.urls import urlpatterns as plan_urls
from planner.purchase_mix.urls import urlpatterns as purchase_mix_urls
from planner.security import ThrottledAuthenticationForm
from planner.serving.urls import urlpatterns as serving_urls
from planner.storage.urls import urlpatterns as storage_urls

planner_urls = [
    path("accounts/signup/", accounts.signup, name="signup"),
    path("accounts/tokens/", accounts.api_tokens, name="api_tokens"),
    path("accounts/tokens/<int:token_id>/revoke", accounts.api_token_revoke,
         name="api_token_revoke"),
    *purchase_mix_urls,
    *capacity_urls,
    *plan_urls,
    *storage_urls,
    *serving_urls,
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", LoginView.as_view(
        authentication_form=ThrottledAuthenticationForm,
        extra_context={"password_reset_enabled": settings.PASSWORD_RESET_ENABLED}),
        name="login"),
    # Without mail (EMAIL_URL) the reset pages say so instead of claiming a link was sent.
    *([] if settings.PASSWORD_RESET_ENABLED else [
        path("accounts/password_reset/", accounts.password_reset_unavailable,
             name="password_reset"),
        path("accounts/password_reset/done/", accounts.password_reset_unavailable),
        path("accounts/reset/<uidb64>/<token>/", accounts.password_reset_unavailable),
        path("accounts/reset/done/", accounts.password_reset_unavailable),
    ]),
    path("accounts/", include("django.contrib.auth.urls")),
    path("healthz", health.healthz, name="healthz"),
    # Exactly /api/: the index page; every other /api/... path is the ninja API.
    path("api/", api_index, name="api_index"),
    path("api/", api.urls),
    path("", home.home, name="home"),
    path("plans/example", home.example_plan, name="example_plan"),
    path("", include((planner_urls, "planner"))),
    path("", include("simulator.urls")),
    path("", include("pricing.urls")),
]
