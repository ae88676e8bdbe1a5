"""Every URL pattern walked as a second user (session, and API token on the API) and as
anonymous, with the first user's ids (small, sequential: guessable) filled in: nobody but the
owner gets a 200 that shows her plans, serving plans, simulations, histories, analyses,
reports, measured runs, report files, exports or tokens, and nothing of hers changes."""

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.base import ContentFile
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from planner.models import AnalysisRun, ApiToken, History, PlanScenario, Report
from planner.purchase_mix import services as mix_services
from planner.serving import services as serving_services
from planner.serving.models import ServingPlan
from planner.tokens import token_create
from pricing.models import InstanceType
from simulator.models import MeasuredRun, SimulationRun
from tests.clients import signed_in

MARK = "ADA-PRIVATE-5e1c"  # in every name and file of hers: must never reach anyone else
CSV = (f"job_id,start,end,gpu_type,gpu_count,team\n"
       f"a,2024-01-01T00:00:00Z,2024-01-01T05:00:00Z,H100,8,{MARK}\n").encode()
PARAM = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>")
# The owner's own pages that must answer her (so the ids filled in are real ones).
OWNER_PAGES = ("plan_detail", "plan_status", "history_detail", "history_status", "detail",
               "status", "report_detail", "report_status", "report_file", "get_plan",
               "get_history", "get_simulation", "serving_detail", "serving_report",
               "serving_get")


@dataclass(frozen=True)
class Route:
    template: str
    name: str

    @property
    def is_api(self) -> bool:
        return self.template.startswith("api/")


def _routes(patterns: list[Any], prefix: str = "") -> Iterator[Route]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield Route(prefix + str(pattern.pattern).lstrip("^").rstrip("$"),
                        pattern.name or "")


@dataclass(frozen=True)
class Hers:
    user: User
    ids: dict[str, int]
    extra_query: str


@pytest.fixture
def hers(db: None, loaded_catalog: None, settings: Any, tmp_path: Path) -> Hers:
    settings.MEDIA_ROOT = str(tmp_path)
    ada = User.objects.create_user("ada", password="pw-ada-123")
    plan = PlanScenario.objects.create(owner=ada, name=f"{MARK} plan",
                                       inputs={"workload": MARK}, status="done", result=None)
    other_plan = PlanScenario.objects.create(owner=ada, name=f"{MARK} plan 2", inputs={})
    simulation = SimulationRun.objects.create(owner=ada, request={"workload": {"name": MARK}})
    outcome = mix_services.history_create(
        owner_id=ada.pk, upload=io.BytesIO(CSV), name=f"{MARK}.csv", size_bytes=len(CSV),
        options=mix_services.ParseOptions(fmt="generic"),
        run_options=mix_services.RunOptions())
    assert outcome.history is not None
    report = Report.objects.create(owner=ada, kind="plan", subject_id=plan.pk, fmt="csv",
                                   title=f"{MARK} report", document={}, status="done")
    report.file.save("report.csv", ContentFile(f"{MARK},1\n".encode()))
    MeasuredRun.objects.create(owner=ada, run_id=f"{MARK}-run", row={"run_id": f"{MARK}-run"})
    token = token_create(owner_id=ada.pk, name=f"{MARK} token")
    serving = serving_services.serving_plan_create(
        owner_id=ada.pk, name=f"{MARK} serving plan",
        raw={"model": "llama3.1-8b", "precision": "fp8", "rate": 5, "input_tokens": 500,
             "output_tokens": 200})
    ids = {"scenario_id": plan.pk, "pk": outcome.history.pk, "history_id": outcome.history.pk,
           "run_id": simulation.pk, "report_id": report.pk, "token_id": token.row.pk,
           "object_id": plan.pk, "plan_id": serving.pk}
    return Hers(ada, ids, f"?id={plan.pk}&id={other_plan.pk}")


def _fill(route: Route, hers: Hers) -> tuple[str, bool]:
    """The URL with her ids in it, and whether it names one of her objects."""
    is_hers = False

    def value(match: re.Match[str]) -> str:
        nonlocal is_hers
        name = match.group("name")
        if name in hers.ids:
            is_hers = True
            return str(hers.ids[name])
        instance = InstanceType.objects.select_related("provider").first()
        assert instance is not None
        return {"fmt": "csv", "slug": "h100-sxm5-80gb", "provider": instance.provider.slug,
                "name": instance.name, "app_label": "planner", "model_name": "planscenario",
                "content_type_id": "1", "uidb64": "MQ", "token": "set-password"}.get(name, "1")

    path = "/" + PARAM.sub(value, route.template)
    if route.name == "plan_compare":
        path, is_hers = path + hers.extra_query, True
    return path, is_hers


def _snapshot(ada: User) -> tuple[Any, ...]:
    """What she has: counts, names and states that a stranger's request must not change."""
    return (
        sorted(PlanScenario.objects.filter(owner=ada).values_list("id", "name", "is_saved")),
        sorted(History.objects.filter(owner=ada).values_list("id", "name")),
        AnalysisRun.objects.filter(history__owner=ada).count(),
        sorted(Report.objects.filter(owner=ada).values_list("id", "title")),
        MeasuredRun.objects.filter(owner=ada).count(),
        sorted(ApiToken.objects.filter(owner=ada).values_list("id", "revoked_at")),
        SimulationRun.objects.filter(owner=ada).count(),
        sorted(ServingPlan.objects.filter(owner=ada).values_list("id", "name")),
    )


def _visitors(route: Route) -> dict[str, Client]:
    bob = User.objects.get_or_create(username="bob")[0]
    as_bob = signed_in(bob)
    visitors = {"bob": as_bob, "anonymous": Client()}
    if route.is_api:
        bobs_token = token_create(owner_id=bob.pk, name="bob's").token
        visitors["bob (API token)"] = Client(HTTP_AUTHORIZATION=f"Bearer {bobs_token}")
    return visitors


def _refusal_problem(response: Any, who: str, is_hers: bool) -> str | None:
    """Why this answer would show her data to someone else (None: it does not)."""
    body = b"".join(response.streaming_content) if response.streaming else response.content
    if MARK.encode() in body:
        return "her data is in the answer"
    status = response.status_code
    if status in (302, 301):
        location = response["Location"]
        if not re.search(r"/(accounts|admin)/login/", location) and is_hers:
            return f"redirects to {location}"
        return None
    if who == "anonymous" and status == 200 and is_hers:
        return "answers 200 to anonymous"
    if is_hers and status not in (400, 401, 403, 404, 405, 415):  # 415: refused unread
        return f"answers {status}"
    return None


def test_no_url_shows_her_data_to_another_user_or_anonymous(hers: Hers) -> None:
    routes = [route for route in _routes(get_resolver().url_patterns)
              if route.name != "logout"]  # logging out is every visitor's own business
    before = _snapshot(hers.user)
    owner = signed_in(hers.user)
    problems, requests = [], 0
    for route in routes:
        path, is_hers = _fill(route, hers)
        if route.name in OWNER_PAGES:
            answer = owner.get(path, secure=True)
            if answer.streaming:  # read to the end, which closes the file
                b"".join(answer.streaming_content)
            assert answer.status_code == 200, f"{path}: the owner gets {answer.status_code}"
        for who, client in _visitors(route).items():
            for method in ("get", "post"):
                response = getattr(client, method)(path, secure=True)
                requests += 1
                problem = _refusal_problem(response, who, is_hers)
                if problem:
                    problems.append(f"{method.upper()} {path} as {who}: {problem}")
    assert not problems, "\n".join(problems)
    assert _snapshot(hers.user) == before
    print(f"URL walk: {len(routes)} URL patterns, {requests} requests")  # the figure
    assert len(routes) > 150 and requests > 2 * 2 * len(routes)
