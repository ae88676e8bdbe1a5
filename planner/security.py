"""Account and HTTP hardening: login throttling, the Content-Security-Policy header, and the
upload size limit enforced before a request body is read."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.defaultfilters import filesizeformat

# Failed sign-ins per (user name, client address) before the pair is locked, and for how long.
LOGIN_FAILURE_LIMIT = 5
LOGIN_LOCK_SECONDS = 15 * 60
LOCKED_MESSAGE = ("Too many failed sign-ins for this account from your address; try again in "
                  "15 minutes.")
# What the pages need: their own scripts and styles (Plotly sets inline styles), data: images
# for the charts' exports, nothing from elsewhere.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)


def _client(request: HttpRequest | None) -> str:
    return str(request.META.get("REMOTE_ADDR", "")) if request is not None else ""


def _key(username: str, request: HttpRequest | None) -> str:
    digest = hashlib.sha256(f"{username.lower()}|{_client(request)}".encode()).hexdigest()
    return f"login-failures:{digest}"


def login_is_locked(username: str, request: HttpRequest | None) -> bool:
    return int(cache.get(_key(username, request), 0)) >= LOGIN_FAILURE_LIMIT


def _record_failure(username: str, request: HttpRequest | None) -> None:
    key = _key(username, request)
    cache.add(key, 0, LOGIN_LOCK_SECONDS)
    try:
        cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, LOGIN_LOCK_SECONDS)


class ThrottledModelBackend(ModelBackend):
    """Django's model backend, refusing a (user name, address) pair after repeated failures.

    Every way in calls authenticate(): the sign-in form, the admin and HTTP basic auth."""

    def authenticate(self, request: HttpRequest | None, username: str | None = None,
                     password: str | None = None, **kwargs: Any) -> Any:
        name = username or str(kwargs.get("email", "") or "")
        if name and login_is_locked(name, request):
            raise PermissionDenied(LOCKED_MESSAGE)
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None and name:
            _record_failure(name, request)
        elif user is not None:
            cache.delete(_key(name, request))
        return user


class ThrottledAuthenticationForm(AuthenticationForm):
    """The sign-in form, saying plainly when an account is locked for a while."""

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username") or ""
        if username and login_is_locked(username, self.request):
            raise ValidationError(LOCKED_MESSAGE, code="locked")
        return super().clean()


class SecurityHeadersMiddleware:
    """Content-Security-Policy on every response (the API docs keep their own page)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response


class QueueUnavailableMiddleware:
    """503 with a readable message when a run was saved but its task could not be sent."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception
                          ) -> HttpResponse | None:
        from planner.runs import QueueUnavailableError

        if not isinstance(exception, QueueUnavailableError):
            return None
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": QueueUnavailableError.message}, status=503)
        return HttpResponse(QueueUnavailableError.message, status=503,
                            content_type="text/plain; charset=utf-8")


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
