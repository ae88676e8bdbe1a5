"""A request that lost its database connection mid-way (the server restarted under it): a
read (GET, HEAD) runs again once on a new connection, which waits for the server to be back
(planner.postgres); anything else answers 503 with Retry-After, saying nothing was lost that
a retry would not redo. A query error on a live connection (a lock timeout) is not this."""

from __future__ import annotations

from django.db import connection
from django.db.utils import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

from planner.refusals import ExceptionMiddleware

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
RETRY_AFTER_SECONDS = 5
MESSAGE = ("The database restarted while this request ran; send it again in a few seconds "
           "(a plan, upload or other change either was saved whole or not at all).")
CONNECTION_ERRORS = (OperationalError, InterfaceError)


def _lost_connection() -> bool:
    return connection.connection is None or not connection.is_usable()


class DatabaseRetryMiddleware(ExceptionMiddleware):
    """A read whose connection was cut runs again once; anything else answers 503."""

    def process_exception(self, request: HttpRequest, exception: Exception
                          ) -> HttpResponse | None:
        if not isinstance(exception, CONNECTION_ERRORS) or not _lost_connection():
            return None
        connection.close()
        match = request.resolver_match
        if request.method in SAFE_METHODS and match is not None:
            try:
                return match.func(request, *match.args, **match.kwargs)  # type: ignore[no-any-return]
            except CONNECTION_ERRORS:
                connection.close()
        return _unavailable(request)


def _unavailable(request: HttpRequest) -> HttpResponse:
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": MESSAGE}, status=503)
    else:
        response = HttpResponse(MESSAGE, status=503, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
