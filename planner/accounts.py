"""Accounts: sign-up and the API tokens page (log-in and log-out are Django's own views under
/accounts/)."""

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from planner import tokens
from planner.client_ip import client_address
from planner.throttle import throttle_count, throttle_hit, throttle_key, throttle_seconds_left

SIGNUP_WINDOW_SECONDS = 3600


def signup(request: HttpRequest) -> HttpResponse:
    """Make an account, sign in, and go on to `next` (the page that sent here) when it is one
    of this site's, else to the front door."""
    form = UserCreationForm(request.POST or None)
    next_url = safe_next(request)
    key = throttle_key("signup", client_address(request))
    retry_after = 0
    if request.method == "POST" and throttle_count(key) >= settings.SIGNUPS_PER_HOUR:
        retry_after = throttle_seconds_left(key)
        form.add_error(None, f"Too many accounts made from your address in the last hour; try "
                             f"again in {-(-retry_after // 60)} minutes.")
    elif request.method == "POST" and form.is_valid():
        user = form.save()
        throttle_hit(key, SIGNUP_WINDOW_SECONDS)
        login(request, user, backend="planner.security.ThrottledModelBackend")
        return redirect(next_url or "home")
    status = 429 if retry_after else 400 if form.errors else 200
    response = render(request, "registration/signup.html", {"form": form, "next": next_url},
                      status=status)
    if retry_after:
        response["Retry-After"] = str(retry_after)
    return response


def safe_next(request: HttpRequest) -> str:
    """The `next` parameter (POST, else GET) if it points into this site, else ""."""
    candidate = str(request.POST.get("next") or request.GET.get("next") or "")
    is_safe = url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure())
    return candidate if candidate and is_safe else ""


@login_required
def api_tokens(request: HttpRequest) -> HttpResponse:
    """List, and on POST make, the user's API tokens.

    A new token is rendered in the POST's own response (not redirected) so that it is never
    stored anywhere, not even in the session; the page is not cached."""
    context: dict[str, object] = {"name_max_length": tokens.NAME_MAX_LENGTH}
    status = 200
    if request.method == "POST":
        try:
            context["created"] = tokens.token_create(owner_id=request.user.pk,
                                                     name=request.POST.get("name", ""))
        except ValueError as exc:
            context["error"], status = str(exc), 400
    context["tokens"] = tokens.token_list(owner_id=request.user.pk)
    response = render(request, "registration/api_tokens.html", context, status=status)
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def api_token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    if not tokens.token_revoke(owner_id=request.user.pk, token_id=token_id):
        return HttpResponse("No such active token of yours.", status=404,
                            content_type="text/plain; charset=utf-8")
    return redirect("planner:api_tokens")


def password_reset_unavailable(request: HttpRequest, **kwargs: object) -> HttpResponse:
    """Password reset when no mail can be sent (EMAIL_URL unset): say so, send nothing."""
    return render(request, "registration/password_reset_unavailable.html", status=404)
