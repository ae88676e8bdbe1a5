"""The one way a request is refused for a reason outside its own input (a limit, a full disk, a
restarting database): JSON {"detail": message} under /api/, else a page saying it; and the base
of the middlewares that turn such an exception into that refusal."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render


def refusal_response(request: HttpRequest, message: str, status: int,
                     headers: dict[str, str] | None = None) -> HttpResponse:
    """The refusal with its status and headers (Retry-After, ...)."""
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": message}, status=status)
    else:
        response = render(request, "planner/limit.html", {"message": message, "status": status},
                          status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


class ExceptionMiddleware:
    """A middleware that only answers exceptions: subclasses define process_exception."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)
