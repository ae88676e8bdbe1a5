"""Users' own measured runs: upload, errors table, own calibration, and isolation between users."""

import csv
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from simulator import services
from simulator.calibration import services as runs_services
from simulator.core import Calibration
from simulator.core.domain import DomainPoint, assess
from simulator.models import CalibrationFit, MeasuredRun, UserCalibration
from tests.clients import signed_in
from tests.measured_runs import RUNS_CSV
from tests.measured_runs import as_mine as _mine
from tests.measured_runs import csv_bytes as _csv_bytes
from tests.measured_runs import reference_rows as _reference_rows

pytestmark = pytest.mark.django_db
RUNS_URL = reverse("simulator:runs")


def _upload(client: Client, data: bytes) -> object:
    return client.post(RUNS_URL, {"file": SimpleUploadedFile("runs.csv", data, "text/csv")})


@pytest.fixture
def user() -> User:
    return User.objects.create_user("ana", password="pw-ana-123")


@pytest.fixture
def client_ana(user: User) -> Client:
    return signed_in(user)


def test_shipped_reference_runs_parse_without_errors() -> None:
    parsed = runs_services.measured_runs_parse(RUNS_CSV.read_bytes())
    assert parsed.errors == []
    assert len(parsed.rows) == 79
    # the reference columns, less those only whole_runs.csv's rows carry
    from simulator.core.whole_runs import WHOLE_RUN_ONLY_COLUMNS

    reference = runs_services.reference_runs_frame().columns
    assert list(parsed.rows[0]) == [c for c in reference if c not in WHOLE_RUN_ONLY_COLUMNS]


def test_upload_stores_runs_and_shows_predictions(user: User, client_ana: Client) -> None:
    response = _upload(client_ana, _csv_bytes(_mine(_reference_rows())))
    assert response.status_code == 302 and response["Location"] == RUNS_URL
    assert MeasuredRun.objects.filter(owner=user).count() == 5
    page = client_ana.get(RUNS_URL)
    assert page.status_code == 200
    assert [t.name for t in page.templates][0] == "simulator/runs.html"
    report = page.context["report"]
    assert len(report.rows) == 5 and report.calibration is None
    for row in report.rows:
        assert row["run_id"].startswith("mine-") and row["unit"] == "samples/s (all GPUs)"
        assert row["predicted_p10"] <= row["predicted"] <= row["predicted_p90"]
        assert row["abs_pct_error"] >= 0
    overall = report.summary[0]
    assert overall["group_by"] == "overall" and overall["n_rows"] == 5
    assert overall["median_ape"] <= overall["p90_ape"]
    assert "Stored 5 new and replaced 0 runs." in page.content.decode()
    # reported and predicted values with thousands separators, as on every other page
    # one decimal in every row (it mixed '108' and '109.6')
    big = next(r for r in report.rows if r["reported"] >= 1000)
    assert f'<td class="num">{big["reported"]:,.1f}</td>' in page.content.decode()


def test_reupload_replaces_runs_with_the_same_run_id(user: User, client_ana: Client) -> None:
    rows = _mine(_reference_rows(n_rows=3))
    _upload(client_ana, _csv_bytes(rows))
    changed = [{**rows[0], "value": "1234.5"}]
    response = _upload(client_ana, _csv_bytes(changed))
    assert response.status_code == 302
    assert MeasuredRun.objects.filter(owner=user).count() == 3
    stored = MeasuredRun.objects.get(owner=user, run_id=rows[0]["run_id"])
    assert stored.row["value"] == 1234.5
    assert "Stored 0 new and replaced 1 runs." in client_ana.get(RUNS_URL).content.decode()


def test_rows_the_model_cannot_predict_show_their_note(client_ana: Client) -> None:
    row = {**_mine(_reference_rows(n_rows=1))[0], "gpu": "Imaginary X1"}
    _upload(client_ana, _csv_bytes([row]))
    shown = client_ana.get(RUNS_URL).context["report"].rows[0]
    assert shown["predicted"] is None and shown["abs_pct_error"] is None
    assert shown["note"].startswith("not predicted:")


def _bad_files() -> list[tuple[str, bytes, str]]:
    rows = _mine(_reference_rows(n_rows=3))
    columns = list(rows[0])
    unknown = [{**row, "colour": "blue"} for row in rows]
    non_numeric = [rows[0], rows[1], {**rows[2], "gpu_count": "eight"}]
    without_metric = [c for c in columns if c != "metric"]
    negative = [rows[0], {**rows[1], "value": "-3"}]
    return [
        ("unknown column", _csv_bytes(unknown, columns + ["colour"]), "line 1, colour: unknown"),
        ("non-numeric", _csv_bytes(non_numeric), "line 4, gpu_count: &#x27;eight&#x27; is not"),
        ("missing column", _csv_bytes(rows, without_metric), "metric: required column is missing"),
        ("negative value", _csv_bytes(negative), "line 3, value: -3 must be greater than 0"),
        ("bad enum", _csv_bytes([{**rows[0], "metric": "speed"}]), "line 2, metric: &#x27;speed"),
        ("duplicate id", _csv_bytes([rows[0], rows[0]]), "line 3, run_id:"),
        ("no rows", b"run_id,metric\n", "required column is missing"),
        ("not utf-8", b"\xff\xfe\x00bad", "not a readable UTF-8 CSV"),
    ]


@pytest.mark.parametrize(("name", "data", "message"), _bad_files(), ids=lambda v: str(v)[:20])
def test_bad_csv_is_refused_and_nothing_is_stored(
    client_ana: Client, name: str, data: bytes, message: str
) -> None:
    response = _upload(client_ana, data)
    assert response.status_code == 400, name
    assert message in response.content.decode()
    assert "Nothing was stored" in response.content.decode()
    assert MeasuredRun.objects.count() == 0


def test_quoted_multiline_cells_keep_line_numbers_right() -> None:
    rows = _mine(_reference_rows(n_rows=2))
    first = {**rows[0], "notes": "one\ntwo\nthree"}
    data = _csv_bytes([first, {**rows[1], "tp": "1.5"}])
    errors = runs_services.measured_runs_parse(data).errors
    assert [str(e) for e in errors] == ["line 5, tp: '1.5' is not a whole number"]


def test_upload_over_the_size_limit_is_refused(settings: object, client_ana: Client) -> None:
    settings.UPLOAD_MAX_BYTES = 1024  # type: ignore[attr-defined]
    response = _upload(client_ana, _csv_bytes(_mine(_reference_rows())))
    assert response.status_code == 400
    assert "measured-runs CSVs are limited to 1.0\xa0KB." in response.content.decode()
    assert MeasuredRun.objects.count() == 0


def test_runs_per_user_are_capped(
    monkeypatch: pytest.MonkeyPatch, user: User, client_ana: Client
) -> None:
    monkeypatch.setattr(runs_services, "MAX_RUNS_PER_USER", 3)
    _upload(client_ana, _csv_bytes(_mine(_reference_rows(n_rows=2))))
    response = _upload(client_ana, _csv_bytes(_mine(_reference_rows(n_rows=4))[2:]))
    assert response.status_code == 400
    assert "would make 4 runs; the limit is 3 per user" in response.content.decode()
    assert MeasuredRun.objects.filter(owner=user).count() == 2


def test_limit_is_two_mib_even_when_the_site_allows_more(settings: object) -> None:
    settings.UPLOAD_MAX_BYTES = 200 * 2**20  # type: ignore[attr-defined]
    assert runs_services.measured_runs_max_bytes() == 2 * 2**20


def test_fitting_on_biased_runs_moves_predictions_toward_them(
    user: User, client_ana: Client, eager_celery: None,
    django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    _upload(client_ana, _csv_bytes(_mine(_reference_rows(), value_scale=0.7)))
    with django_capture_on_commit_callbacks(execute=True):  # the task runs at the commit
        response = client_ana.post(reverse("simulator:runs_fit"))
    assert response.status_code == 302 and response["Location"] == RUNS_URL
    fit = CalibrationFit.objects.get(owner=user)
    assert fit.status == "done" and fit.progress_pct == 100
    # the fit predicted the runs under both calibrations: the page comes back at once
    predicted: list[int] = []
    with monkeypatch.context() as patch:
        patch.setattr(runs_services, "validate", lambda runs, *a: predicted.append(len(runs)))
        page = client_ana.get(RUNS_URL)
    assert predicted == []
    text = page.content.decode()
    assert "median absolute error on your runs" in text and 'id="progress"' not in text
    own = UserCalibration.objects.get(owner=user)
    # the 380 reference runs, the 29 usable whole runs of whole_runs.csv, and your 5
    assert own.is_active and own.n_runs == 380 + 29 + 5 == fit.result["n_runs"]
    assert fit.result["after_median_ape_pct"] < fit.result["before_median_ape_pct"]
    calibration = services.calibration_for(user.id)
    assert calibration == Calibration.from_dict(own.params)
    assert calibration != services.shipped_calibration()
    overall = page.context["report"].summary[0]
    assert overall["median_ape"] < overall["shipped_median_ape"] - 5  # percentage points

    response = client_ana.post(reverse("simulator:runs_shipped"))
    assert response.status_code == 302
    assert services.calibration_for(user.id) == services.shipped_calibration()
    report = client_ana.get(RUNS_URL).context["report"]
    assert report.calibration is not None and not report.is_own_calibration_active


def test_fit_service_reports_progress_and_before_and_after_error(user: User) -> None:
    runs_services.measured_runs_import(
        owner_id=user.id, data=_csv_bytes(_mine(_reference_rows("bert"), value_scale=0.7))
    )
    heard: list[tuple[float, str]] = []
    outcome = runs_services.user_calibration_fit(
        owner_id=user.id, progress=lambda share, line: heard.append((share, line)))
    assert outcome.n_own_runs == 5
    assert outcome.after_median_ape_pct < outcome.before_median_ape_pct
    shares = [share for share, _ in heard]
    assert shares == sorted(shares) and shares[0] < 0.05 and shares[-1] >= 0.95
    lines = " | ".join(line for _, line in heard)  # 420 reference rows and your 5
    assert "choosing layouts: 25 of 425 runs" in lines and "fitting: pass 2 of 2" in lines


def test_a_queued_fit_shows_progress_only_to_its_owner_and_a_second_click_waits(
    user: User, client_ana: Client, django_capture_on_commit_callbacks: Any,
) -> None:
    _upload(client_ana, _csv_bytes(_mine(_reference_rows(n_rows=2))))
    with django_capture_on_commit_callbacks(execute=False):  # no worker takes it
        client_ana.post(reverse("simulator:runs_fit"))
        client_ana.post(reverse("simulator:runs_fit"))
    fit = CalibrationFit.objects.get(owner=user)  # one fit, not two
    status_url = reverse("simulator:runs_fit_status", args=[fit.pk])
    text = client_ana.get(RUNS_URL).content.decode()
    assert f'data-status-url="{status_url}"' in text and "queued" in text
    assert re.search(r"<button type=\"submit\" disabled>Fit my calibration", text)
    status = client_ana.get(status_url).json()
    assert status["status"] == "queued" and status["is_finished"] is False
    # Going back to the shipped calibration now would be undone when the fit ends: refused.
    UserCalibration.objects.create(owner=user, params={}, n_runs=1, is_active=True)
    assert "Use the shipped calibration" not in client_ana.get(RUNS_URL).content.decode()
    refused = client_ana.post(reverse("simulator:runs_shipped"), follow=True)
    assert "choose the shipped one after that" in refused.content.decode()
    assert UserCalibration.objects.get(owner=user).is_active
    other = signed_in(User.objects.create_user("bo", password="pw-bo-123"))
    assert other.get(status_url).status_code == 404
    assert Client().get(status_url).status_code == 302  # to the sign-in page


def test_a_fit_whose_runs_were_deleted_meanwhile_fails_readably(
    user: User, client_ana: Client, eager_celery: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    _upload(client_ana, _csv_bytes(_mine(_reference_rows(n_rows=2))))
    with django_capture_on_commit_callbacks(execute=False) as queued:
        client_ana.post(reverse("simulator:runs_fit"))
    client_ana.post(reverse("simulator:runs_delete"))
    for send in queued:  # the worker takes it now
        send()
    fit = CalibrationFit.objects.get(owner=user)
    assert fit.status == "failed"
    text = client_ana.get(RUNS_URL).content.decode()
    assert "failed: Upload some measured runs before fitting a calibration." in text
    assert not UserCalibration.objects.exists()


def test_fit_without_runs_says_so(user: User, client_ana: Client) -> None:
    response = client_ana.post(reverse("simulator:runs_fit"), follow=True)
    assert "Upload some measured runs before fitting" in response.content.decode()
    assert not UserCalibration.objects.exists() and not CalibrationFit.objects.exists()


def test_delete_removes_only_my_runs(user: User, client_ana: Client) -> None:
    other = User.objects.create_user("bo", password="pw-bo-123")
    rows = _mine(_reference_rows(n_rows=2))
    runs_services.measured_runs_import(owner_id=other.id, data=_csv_bytes(rows))
    _upload(client_ana, _csv_bytes(rows))
    response = client_ana.post(reverse("simulator:runs_delete"))
    assert response.status_code == 302
    assert not MeasuredRun.objects.filter(owner=user).exists()
    assert MeasuredRun.objects.filter(owner=other).count() == 2


def test_another_user_never_sees_my_runs(client_ana: Client) -> None:
    _upload(client_ana, _csv_bytes(_mine(_reference_rows(n_rows=2))))
    other = signed_in(User.objects.create_user("bo", password="pw-bo-123"))
    page = other.get(RUNS_URL)
    assert page.status_code == 200 and page.context["report"].rows == []
    assert "mine-" not in page.content.decode()


def test_pages_require_login_and_actions_require_post(client_ana: Client) -> None:
    anonymous = Client()
    for name in ("runs", "runs_template", "runs_fit", "runs_shipped", "runs_delete"):
        response = anonymous.post(reverse(f"simulator:{name}"))
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    for name in ("runs_fit", "runs_shipped", "runs_delete"):
        assert client_ana.get(reverse(f"simulator:{name}")).status_code == 405


def test_template_csv_has_the_schema_header_and_a_valid_example(client_ana: Client) -> None:
    response = client_ana.get(reverse("simulator:runs_template"))
    assert response.status_code == 200 and response["Content-Type"] == "text/csv"
    assert "attachment" in response["Content-Disposition"]
    parsed = runs_services.measured_runs_parse(response.content)
    assert parsed.errors == [] and len(parsed.rows) == 1
    header = response.content.decode().splitlines()[0].split(",")
    assert tuple(header) == runs_services.COLUMNS


def test_tp_comm_overlap_is_read_and_checked() -> None:
    rows = _mine(_reference_rows(kind="llm", n_rows=2))
    assert "tp_comm_overlap" in rows[0]  # the shipped schema carries the column
    data = _csv_bytes([{**rows[0], "tp_comm_overlap": "yes"}, {**rows[1], "tp_comm_overlap": "on"}])
    parsed = runs_services.measured_runs_parse(data)
    assert parsed.rows[0]["tp_comm_overlap"] == "yes"
    assert [str(e) for e in parsed.errors] == [
        "line 3, tp_comm_overlap: 'on' is not one of yes, no"]


def test_virtual_stages_is_read_and_a_zero_degree_is_named() -> None:
    rows = _mine(_reference_rows(kind="llm", n_rows=3))
    assert "virtual_stages" in rows[0]  # the shipped schema carries the column
    data = _csv_bytes([{**rows[0], "virtual_stages": "2"}, {**rows[1], "virtual_stages": "0"},
                       {**rows[2], "tp": "0"}])
    parsed = runs_services.measured_runs_parse(data)
    assert parsed.rows[0]["virtual_stages"] == 2
    assert [str(e) for e in parsed.errors] == [
        "line 3, virtual_stages: 0 must be greater than 0", "line 4, tp: 0 must be greater than 0"]


def test_your_runs_on_a_gpu_at_the_generic_efficiency_still_move_your_fit(user: User) -> None:
    # Published runs at the generic efficiency (MI300X here) weigh nothing in the shipped
    # fit; your own runs on such a GPU must still pull your calibration toward them.
    additions = RUNS_CSV.with_name("reference_runs_additions.csv")
    with additions.open(newline="", encoding="utf-8") as source:
        rows = [row for row in csv.DictReader(source)
                if row["run_id"].startswith("TORCHAO-README-MI300X")]
    assert len(rows) == 3
    runs_services.measured_runs_import(owner_id=user.id, data=_csv_bytes(_mine(rows)))
    outcome = runs_services.user_calibration_fit(owner_id=user.id)
    assert outcome.n_own_runs == 3
    assert outcome.after_median_ape_pct < outcome.before_median_ape_pct
    # ...and your calibration now has runs of the MI300X (the shipped one has none it fits).
    point = DomainPoint("Instinct MI300X OAM-192GB", "CDNA 3", "bf16", 8, 8192)
    assert assess(services.shipped_calibration().domain, point).status == "uncalibrated"
    assert assess(services.calibration_for(user.id).domain, point).status != "uncalibrated"


def test_the_page_predicts_once_per_change_of_runs_or_calibration(
    user: User, client_ana: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Predicting a run costs about 12 ms; at the 200-run limit a page that predicted on every
    view took seconds. Views reuse the predictions until the runs or the calibration change."""
    predicted: list[int] = []
    real_validate = runs_services.validate

    def counting_validate(runs: Any, *args: Any) -> Any:
        predicted.append(len(runs))
        return real_validate(runs, *args)

    monkeypatch.setattr(runs_services, "validate", counting_validate)
    rows = _mine(_reference_rows(n_rows=3))
    _upload(client_ana, _csv_bytes(rows))
    first = client_ana.get(RUNS_URL).context["report"].rows
    assert client_ana.get(RUNS_URL).context["report"].rows == first
    assert predicted == [3]

    # a changed run is predicted afresh: the page never shows an error against an old value
    _upload(client_ana, _csv_bytes([{**rows[0], "value": "1234.5"}]))
    changed = client_ana.get(RUNS_URL).context["report"].rows
    assert predicted == [3, 3]
    before, after = ({row["run_id"]: row for row in shown}[rows[0]["run_id"]]
                     for shown in (first, changed))
    assert after["reported"] == 1234.5 != before["reported"]
    assert after["abs_pct_error"] != before["abs_pct_error"]

    # a calibration of their own: predicted once under it (the shipped one is still known)
    shipped = services.shipped_calibration()
    own = shipped.to_dict() | {"production_overhead_fraction": 0.3}
    UserCalibration.objects.create(owner=user, params=own, n_runs=3, is_active=True)
    for _ in range(2):
        report = client_ana.get(RUNS_URL).context["report"]
        assert report.is_own_calibration_active
    assert predicted == [3, 3, 3]
