"""API authentication: a browser session, an API token (`Authorization: Bearer`) or HTTP basic
auth, so that curl and scripts work. Tokens and passwords travel only over HTTPS (unless
API_BASIC_AUTH_HTTPS_ONLY is off for local development)."""

from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate
from django.http import HttpRequest
from ninja.security import HttpBasicAuth, HttpBearer, SessionAuth

from planner.tokens import token_user

REALM = "GPU Planner API"


def credentials_allowed(request: HttpRequest) -> bool:
    """A secret sent in clear text is refused even when right."""
    return bool(request.is_secure() or not settings.API_BASIC_AUTH_HTTPS_ONLY)


class BasicAuth(HttpBasicAuth):
    """HTTP basic auth with the account's user name and password."""

    def authenticate(self, request: HttpRequest, username: str, password: str) -> Any:
        # No account name holds NUL (the forms refuse it); looked up, it is a PostgreSQL 500.
        if not credentials_allowed(request) or "\x00" in username:
            return None
        user = authenticate(request, username=username, password=password)
        if user is not None and user.is_active:
            request.user = user
            return user
        return None


class TokenAuth(HttpBearer):
    """`Authorization: Bearer <token>` with a token made on the account's API tokens page."""

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        if not credentials_allowed(request):
            return None
        user = token_user(token)
        if user is not None:
            request.user = user
        return user


def challenge(request: HttpRequest) -> tuple[str, str]:
    """The WWW-Authenticate header of a 401 (RFC 6750 / 7617) and what to do, in words."""
    sent = request.headers.get("Authorization", "").split(" ")[0].lower()
    if sent in ("bearer", "basic") and not credentials_allowed(request):
        detail = "API credentials are accepted over HTTPS only."
    elif sent == "bearer":
        detail = "The API token is unknown or revoked; make a new one under API tokens."
    else:
        detail = ("Sign in (session), or send an API token (Authorization: Bearer) or HTTP "
                  "basic credentials over HTTPS.")
    basic = f'Basic realm="{REALM}", charset="UTF-8"'
    if sent == "bearer":
        return f'Bearer realm="{REALM}", error="invalid_token", {basic}', detail
    return f'{basic}, Bearer realm="{REALM}"', detail


class SignedInSession(SessionAuth):
    """The browser session, CSRF-checked on unsafe methods; a request with no signed-in
    session is simply not authenticated here (a 401 naming what to send, never the CSRF 403
    a bad token or anonymous POST would otherwise get)."""

    def __call__(self, request: HttpRequest) -> Any:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        return super().__call__(request)


API_AUTH = [TokenAuth(), BasicAuth(), SignedInSession()]
