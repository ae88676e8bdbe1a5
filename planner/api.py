"""The JSON API: one NinjaAPI; each feature's router is mounted here with its auth.

Routers declare no auth of their own, so no app reaches up into the project package for it.
Schema at /api/openapi.json, docs at /api/docs.
"""

from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError
from ninja.parser import Parser
from ninja.types import DictStrAny

from planner.api_auth import API_AUTH, challenge
from planner.capacity.api import router as capacity_router
from planner.fair_shares import QuotaExceededError, RateLimitedError, share_refusal
from planner.plans.api import router as plans_router
from planner.purchase_mix.api import router as purchase_mix_router
from planner.reports.api import router as reports_router
from planner.runs import QueueUnavailableError
from planner.serving.api import router as serving_router
from planner.storage.api import router as storage_router
from pricing.api import router as pricing_router
from simulator.api import router as simulator_router


class UnsupportedMediaTypeError(ValueError):
    """A JSON body sent under another content type (415)."""


class JsonOnlyParser(Parser):
    """JSON bodies only as application/json (or a +json type): a body sent as text/plain or a
    form would otherwise be read as JSON all the same."""

    def parse_body(self, request: HttpRequest) -> DictStrAny:
        media_type = (request.content_type or "").strip().lower()
        if media_type != "application/json" and not media_type.endswith("+json"):
            raise UnsupportedMediaTypeError(
                f"send the body as JSON with Content-Type: application/json (it came as "
                f"{media_type or 'no content type'!r})")
        return super().parse_body(request)


api = NinjaAPI(
    title="GPU Planner API",
    version="1",
    description="GPU catalog, cloud prices, simulations and plans. Prices are USD per hour.",
    openapi_url="/openapi.json",
    docs_url="/docs",
    parser=JsonOnlyParser(),
)


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    """Ninja's answer, except a body under the wrong content type: 415 saying what to send."""
    if isinstance(exc.__cause__, UnsupportedMediaTypeError):
        return api.create_response(request, {"detail": str(exc.__cause__)}, status=415)
    return api.create_response(request, {"detail": str(exc)}, status=exc.status_code)


@api.exception_handler(AuthenticationError)
def _unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    """401 with the challenge clients need (RFC 7235), and what to do about it."""
    header, detail = challenge(request)
    response = api.create_response(request, {"detail": detail}, status=401)
    response["WWW-Authenticate"] = header
    return response


@api.exception_handler(RateLimitedError)
@api.exception_handler(QuotaExceededError)
def _over_share(request: HttpRequest, exc: RateLimitedError | QuotaExceededError
                ) -> HttpResponse:
    """LimitsMiddleware's refusal: Ninja answers its operations' errors itself."""
    return share_refusal(request, exc)


@api.exception_handler(QueueUnavailableError)
def _queue_unavailable(request: HttpRequest, exc: QueueUnavailableError) -> HttpResponse:
    return api.create_response(request, {"detail": QueueUnavailableError.message}, status=503)


api.add_router("/", pricing_router)
api.add_router("/histories", purchase_mix_router, auth=API_AUTH)
api.add_router("/histories", capacity_router, auth=API_AUTH)
api.add_router("/simulations", simulator_router, auth=API_AUTH)
api.add_router("/serving", serving_router, auth=API_AUTH)
api.add_router("/plans", plans_router, auth=API_AUTH)
api.add_router("/storage", storage_router, auth=API_AUTH)
api.add_router("/reports", reports_router, auth=API_AUTH)


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    summary: str


def endpoint_groups() -> dict[str, list[Endpoint]]:
    """Every API operation by OpenAPI tag, read from the schema the docs page shows."""
    schema = api.get_openapi_schema(path_prefix="/api")
    groups: dict[str, list[Endpoint]] = {}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            tag = (operation.get("tags") or ["other"])[0]
            groups.setdefault(tag, []).append(
                Endpoint(method.upper(), path, operation.get("summary", "")))
    return groups


def api_index(request: HttpRequest) -> HttpResponse:
    """/api/: what the API offers, how to sign in, and links to the docs and the schema."""
    return render(request, "api_index.html", {"groups": endpoint_groups()})
