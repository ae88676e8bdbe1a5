"""Account and HTTP hardening: login throttling, the Content-Security-Policy header, the
upload size limit enforced before a request body is read, and addresses holding NUL refused."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.defaultfilters import filesizeformat

from planner.client_ip import client_address
from planner.refusals import ExceptionMiddleware
from planner.throttle import throttle_clear, throttle_count, throttle_hit, throttle_key

# Failed sign-ins per (user name, client address) before the pair is locked, and for how long;
# and failed sign-ins from one address, whatever the user names, before the address is locked.
LOGIN_FAILURE_LIMIT = 5
ADDRESS_FAILURE_LIMIT = 20
LOGIN_LOCK_SECONDS = 15 * 60
LOCKED_MESSAGE = ("Too many failed sign-ins for this account from your address; try again in "
                  "15 minutes.")
ADDRESS_LOCKED_MESSAGE = ("Too many failed sign-ins from your address; try again in "
                          "15 minutes.")
# What the pages need: their own scripts and styles (Plotly sets inline styles), data: images
# for the charts' exports, nothing from elsewhere.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)
FORWARDED_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_PROTO", "HTTP_X_FORWARDED_HOST")


def _pair_key(username: str, request: HttpRequest | None) -> str:
    return throttle_key("login", username.lower(), client_address(request))


def _address_key(request: HttpRequest | None) -> str:
    return throttle_key("login-address", client_address(request))


def login_lock_message(username: str, request: HttpRequest | None) -> str:
    """Why a sign-in is refused before the password is checked, or "" when it is not."""
    if throttle_count(_address_key(request)) >= ADDRESS_FAILURE_LIMIT:
        return ADDRESS_LOCKED_MESSAGE
    if username and throttle_count(_pair_key(username, request)) >= LOGIN_FAILURE_LIMIT:
        return LOCKED_MESSAGE
    return ""


def login_is_locked(username: str, request: HttpRequest | None) -> bool:
    return bool(login_lock_message(username, request))


def _record_failure(username: str, request: HttpRequest | None) -> None:
    throttle_hit(_pair_key(username, request), LOGIN_LOCK_SECONDS)
    throttle_hit(_address_key(request), LOGIN_LOCK_SECONDS)


class ThrottledModelBackend(ModelBackend):
    """Django's model backend, refusing a (user name, address) pair after repeated failures.

    Every way in calls authenticate(): the sign-in form, the admin and HTTP basic auth."""

    def authenticate(self, request: HttpRequest | None, username: str | None = None,
                     password: str | None = None, **kwargs: Any) -> Any:
        name = username or str(kwargs.get("email", "") or "")
        locked = login_lock_message(name, request) if name else ""
        if locked:
            raise PermissionDenied(locked)
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None and name:
            _record_failure(name, request)
        elif user is not None:
            throttle_clear(_pair_key(name, request))
        return user


class ThrottledAuthenticationForm(AuthenticationForm):
    """The sign-in form, saying plainly when an account is locked for a while."""

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username") or ""
        locked = login_lock_message(username, self.request) if username else ""
        if locked:
            raise ValidationError(locked, code="locked")
        return super().clean()


class TrustedProxyMiddleware:
    """Forwarded headers (X-Forwarded-Proto, -For, -Host) count only when the request comes
    from an address in TRUSTED_PROXIES: from anyone else they are dropped, so that nobody can
    claim HTTPS or another client address by sending them."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if str(request.META.get("REMOTE_ADDR", "")) not in settings.TRUSTED_PROXIES:
            for header in FORWARDED_HEADERS:
                request.META.pop(header, None)
        return self.get_response(request)


class SecurityHeadersMiddleware:
    """Content-Security-Policy on every response (the API docs keep their own page)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response


class QueueUnavailableMiddleware(ExceptionMiddleware):
    """503 with a readable message when a run was saved but its task could not be sent."""

    def process_exception(self, request: HttpRequest, exception: Exception
                          ) -> HttpResponse | None:
        from planner.runs import QueueUnavailableError

        if not isinstance(exception, QueueUnavailableError):
            return None
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": QueueUnavailableError.message}, status=503)
        return HttpResponse(QueueUnavailableError.message, status=503,
                            content_type="text/plain; charset=utf-8")


class NulAddressMiddleware:
    """Refuse an address holding NUL (%00) with 400: no URL of the site has one, and a NUL that
    reaches a database query is a 500 on PostgreSQL (/instances/aws/p4d%00/, ?provider=%00)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        query = str(request.META.get("QUERY_STRING", ""))
        if "\x00" in request.path or "%00" in query or "\x00" in query:
            message = "The address holds a NUL character (%00); remove it."
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": message}, status=400)
            return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


class UploadLimitMiddleware:
    """Refuse a request whose declared body is larger than the upload limit with 413, before
    any of it is read or written to disk."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.UPLOAD_MAX_BYTES + settings.UPLOAD_FORM_OVERHEAD_BYTES
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit:
            message = (f"The upload is {filesizeformat(length)}; the limit is "
                       f"{filesizeformat(settings.UPLOAD_MAX_BYTES)}.")
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": message}, status=413)
            return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
