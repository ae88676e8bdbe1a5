"""The front door, its worked example, /simulations/, /api/ and the account on every page."""

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from planner.plans.example import EXAMPLE_NAME
from planner.plans.models import PlanScenario
from pricing.models import InstanceType
from simulator.models import SimulationRun
from tests.clients import signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def ada(loaded_catalog: None) -> User:
    return User.objects.create_user("ada", password="pw-ada-123")


def _signed_in(user: User) -> Client:
    return signed_in(user)


def test_home_says_what_it_answers_and_where_to_start(loaded_catalog: None) -> None:
    page = Client().get("/").content.decode()
    assert "Which GPUs, how many, on which cloud, bought how?" in page
    for link in ('id="start-plan"', 'id="start-history"', 'id="start-catalog"'):
        assert link in page
    assert 'href="/plans/new"' in page and 'href="/history/upload"' in page
    assert 'href="/gpus/"' in page and 'href="/plans/example"' in page
    assert "1.0 T tokens" in page  # the example's goal in words, not "1000000000000.0"
    assert 'id="sign-in"' in page  # signed out: a sign-in link instead of a name


def test_catalog_lives_at_gpus(loaded_catalog: None) -> None:
    response = Client().get("/gpus/")
    assert response.status_code == 200 and 'id="catalog-table"' in response.content.decode()


def test_worked_example_opens_one_finished_plan_per_user(ada: User) -> None:
    client = _signed_in(ada)
    first = client.get("/plans/example")
    scenario = PlanScenario.objects.get(owner=ada, name=EXAMPLE_NAME)
    assert first["Location"] == f"/plans/{scenario.id}"
    assert scenario.status == "done" and scenario.result["recommendations"]
    page = client.get(first["Location"]).content.decode()
    assert 'data-card="cheapest_meeting_deadline"' in page
    assert re.search(r"P10–P90 [\d.,]+–[\d.,]+ days", page)
    assert client.get("/plans/example")["Location"] == first["Location"]  # no second copy
    assert PlanScenario.objects.filter(owner=ada).count() == 1
    bob = User.objects.create_user("bob", password="pw-bob-123")
    assert _signed_in(bob).get(first["Location"]).status_code == 404


def test_a_visitor_sees_the_worked_example_read_only_and_nothing_is_stored(ada: User) -> None:
    response = Client().get("/plans/example")
    page = response.content.decode()
    assert response.status_code == 200 and EXAMPLE_NAME in page
    assert 'data-card="cheapest_meeting_deadline"' in page and 'id="plan-table"' in page
    assert "Sign up to save and change it" in page
    assert 'href="/accounts/signup/?next=/plans/example"' in page
    # Read-only: no save form, no export, no what-if form.
    for part in ('id="save-whatif-form"', 'id="save-form"', "Recompute", "report-exports"):
        assert part not in page, part
    assert PlanScenario.objects.count() == 0


def test_a_shared_what_if_link_renders_for_a_visitor_and_is_rate_limited(
    ada: User, settings: Any
) -> None:
    settings.ANONYMOUS_PREVIEWS_PER_10_MINUTES = 2
    query = "workload=llama2-7b&tokens=1e11&deadline_days=30&providers=aws"
    visitor = Client(REMOTE_ADDR="192.0.2.7")
    first = visitor.get(f"/plans/whatif?{query}")
    assert first.status_code == 200 and "Sign up to save and change it" in first.content.decode()
    assert 'id="save-whatif-form"' not in first.content.decode()
    assert visitor.get(f"/plans/whatif?{query}").status_code == 200  # cached: not counted
    assert visitor.get(f"/plans/whatif?{query}&deadline_days=40").status_code == 200
    refused = visitor.get(f"/plans/whatif?{query}&deadline_days=50")
    assert refused.status_code == 429 and "Too many plans previewed" in refused.content.decode()
    other = Client(REMOTE_ADDR="192.0.2.8").get(f"/plans/whatif?{query}&deadline_days=50")
    assert other.status_code == 200  # another address has its own allowance
    bad = visitor.get("/plans/whatif?workload=llama2-7b&tokens=-5")
    assert bad.status_code == 400 and "problems" in bad.content.decode()
    assert PlanScenario.objects.count() == 0
    signed = _signed_in(ada).get(f"/plans/whatif?{query}").content.decode()
    assert 'id="save-whatif-form"' in signed and "Sign up to save" not in signed


def test_sign_up_and_log_in_keep_next_and_refuse_other_sites(loaded_catalog: None) -> None:
    signup = Client().get("/accounts/signup/?next=/plans/example").content.decode()
    assert 'name="next" value="/plans/example"' in signup
    assert 'href="/accounts/login/?next=/plans/example"' in signup
    login = Client().get("/accounts/login/?next=/plans/example").content.decode()
    assert 'href="/accounts/signup/?next=/plans/example"' in login
    form = {"username": "carol", "password1": "a-long-pass-42x", "password2": "a-long-pass-42x"}
    made = Client().post("/accounts/signup/", form | {"next": "/plans/example"})
    assert made.status_code == 302 and made["Location"] == "/plans/example"
    elsewhere = Client().post("/accounts/signup/", form | {"username": "dan",
                                                           "next": "https://evil.example/"})
    assert elsewhere["Location"] == "/"


def test_an_empty_sign_up_names_each_missing_field(loaded_catalog: None) -> None:
    """The summary said "3 problems to fix" over three bare "This field is required."."""
    page = Client().post("/accounts/signup/", {"username": ""})
    assert page.status_code == 400
    summary = page.content.decode().split('id="error-summary"', 1)[1].split("</ul>", 1)[0]
    assert "3 problems to fix" in summary
    for label in ("Username: This field is required.", "Password: This field is required.",
                  "Password confirmation: This field is required."):
        assert label in summary


def test_tokens_page_has_no_second_sign_out_in_its_content(ada: User) -> None:
    page = _signed_in(ada).get("/accounts/tokens/").content.decode()
    main = page[page.index("<main"):page.index("</main>")]
    assert "Sign out" not in main and "Signed in as" not in main
    assert page.count("Sign out") == 1


def test_simulations_list_shows_only_your_own(ada: User) -> None:
    instance = InstanceType.objects.get(provider__slug="aws", name="p4de.24xlarge")
    request = {"workload": {"preset": "llama2-7b"}, "goal": {"tokens": 1e11},
               "instance_type_id": instance.id, "nodes": 2, "layout": {}}
    mine = SimulationRun.objects.create(owner=ada, request=request)
    bob = User.objects.create_user("bob", password="pw-bob-123")
    theirs = SimulationRun.objects.create(owner=bob, request=request)
    page = _signed_in(ada).get("/simulations/").content.decode()
    assert f'href="/simulations/{mine.id}"' in page
    assert f'href="/simulations/{theirs.id}"' not in page
    assert Client().get("/simulations/")["Location"].startswith("/accounts/login/")


def test_api_index_links_the_docs_and_lists_every_endpoint_group(loaded_catalog: None) -> None:
    response = Client().get("/api/")
    page = response.content.decode()
    assert response.status_code == 200
    assert 'href="/api/docs"' in page and 'href="/api/openapi.json"' in page
    for group in ("Catalog", "Plans", "Simulations", "Purchase mix"):
        assert f"<h3>{group}</h3>" in page
    assert "<code>/api/gpus</code>" in page
    assert Client().get("/api/gpus").status_code == 200  # the API itself is still mounted
    # every operation says what it does in words, not a name made from its function
    for generated in ("Create Plan", "Get Plan", "Delete Plan", "Get Plan Report",
                      "Create Simulation", "Get Simulation"):
        assert f"<td>{generated}</td>" not in page
    assert "Plan a training run (in the background)" in page


@pytest.mark.parametrize("path", ["/", "/gpus/", "/prices/", "/plans/", "/simulations/",
                                  "/history/", "/reports/", "/api/", "/plans/new"])
def test_every_page_shows_who_is_signed_in_and_the_whole_menu(ada: User, path: str) -> None:
    page = _signed_in(ada).get(path).content.decode()
    assert "Signed in as" in page and "<strong>ada</strong>" in page, path
    nav = page[page.index('id="site-nav"'):page.index("</nav>")]
    for href in ("/gpus/", "/prices/", "/simulations/new", "/plans/new", "/history/upload",
                 "/plans/", "/simulations/", "/history/", "/reports/", "/api/"):
        assert f'href="{href}"' in nav, (path, href)
    assert "style=" not in page.split("<main>")[0]  # the CSP allows no inline styles here
