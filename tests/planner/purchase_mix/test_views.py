import re

import pytest
from django.urls import reverse

from planner.core import formatting as fmt
from planner.models import AnalysisRun, History
from planner.purchase_mix.core.upload.parsing import parse_column_mapping
from tests.clients import signed_in
from tests.planner.conftest import (
    BAD_CSV,
    GENERIC_CSV,
    HELIOS,
    HELIOS_FIELDS,
    PHILLY,
    PHILLY_MAP,
    csv_upload,
    file_upload,
)

UPLOAD = "/history/upload"


def _post(client, upload, **fields):
    """Post the upload form; a `column_map` text becomes the header pickers the page has."""
    text = fields.pop("column_map", "")
    picks = {f"map_{name}": column for name, column in parse_column_mapping(text).items()}
    return client.post(UPLOAD, {"file": upload, "fmt": "generic", "duplicate_ids": "refuse",
                                **picks, **fields})


@pytest.mark.parametrize("url", ["/history/", UPLOAD, "/history/1", "/history/1/status"])
def test_login_required(client, db, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_login_page_and_signup(client, db):
    assert client.get(reverse("login")).status_code == 200
    response = client.post(
        "/accounts/signup/",
        {"username": "carol", "password1": "a-long-pass-42x", "password2": "a-long-pass-42x"},
    )
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.get("/history/").status_code == 200


def test_upload_page_documents_columns_and_example(user_client):
    response = user_client.get(UPLOAD)
    assert response.status_code == 200
    assert response.templates[0].name == "planner/purchase_mix/upload.html"
    body = response.content.decode()
    for column in ("job_id, start, end, gpu_type, gpu_count", "interruptible", "region"):
        assert column in body
    assert "planner/example-generic.csv" in body


def test_providers_are_named_in_words_as_on_every_other_page(user_client, loaded_catalog):
    form = user_client.get(UPLOAD).context["form"]
    providers = dict(form.fields["provider"].choices)
    assert providers["aws"] == "AWS" and providers["gcp"] == "Google Cloud"  # not "aws", "gcp"
    groups = [label for label, _ in form.fields["region"].choices[1:]]
    assert "Azure" in groups and "azure" not in groups


def test_time_unit_menu_offers_each_unit_once_seconds_first(user_client):
    form = user_client.get(UPLOAD).context["form"]
    field = form["time_unit"]
    assert [label for _, label in field.field.choices] == ["seconds", "minutes", "hours"]
    assert field.value() == "s"


def test_bad_file_shows_line_numbered_errors_and_stores_nothing(user_client, settings):
    response = _post(user_client, csv_upload(BAD_CSV))
    assert response.status_code == 400
    body = response.content.decode()
    assert 'id="row-errors"' in body
    lines = [(e.line, e.field) for e in response.context["parse"].errors]
    assert lines == [(3, "start"), (4, "gpu_count")]
    assert History.objects.count() == 0 and AnalysisRun.objects.count() == 0


def test_skip_bad_rows_stores_the_good_rows(user_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        response = _post(user_client, csv_upload(BAD_CSV), skip_bad_rows="on")
    history = History.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/history/{history.pk}"
    assert (history.records, history.rows_read, history.rows_skipped) == (1, 3, 2)
    assert history.runs.get().status == "queued" and len(callbacks) == 1


def test_missing_columns_is_a_form_error(user_client):
    response = _post(user_client, csv_upload("a,b\n1,2\n"))
    assert response.status_code == 400
    body = response.content.decode()
    assert ('<p class="field-error" id="id_map_start_error">The file has no start column. Pick '
            "the column that holds it here, or rename a column of the file to start.</p>") in body
    assert "['" not in body
    assert History.objects.count() == 0


NO_GPU_TYPE = "job_id,start,end,gpu_count\nj1,2024-01-01T00:00,2024-01-01T05:00,8\n"


def test_missing_gpu_type_marks_the_default_gpu_field_and_keeps_the_file(user_client):
    response = _post(user_client, csv_upload(NO_GPU_TYPE))
    assert response.status_code == 400
    body = response.content.decode()
    assert ('<p class="field-error" id="id_default_gpu_type_error">The file has no gpu_type '
            "column. Choose a Default GPU type, or add a gpu_type column to the file.</p>") in body
    start = body.index('id="id_default_gpu_type"')
    assert 'aria-invalid="true"' in body[start - 250:start + 250]
    assert 'href="#id_default_gpu_type"' in body
    assert 'id="staged-file"' in body and "<strong>jobs.csv</strong>" in body
    # The second submit chooses no file: the kept one is used, then deleted.
    response = user_client.post(UPLOAD, {"fmt": "generic", "duplicate_ids": "refuse",
                                         "default_gpu_type": "a100-80gb"})
    history = History.objects.get()
    assert response.status_code == 302 and history.records == 1
    assert history.gpu_types == ["a100-80gb"] or history.gpu_types
    assert "purchase_mix_staged_upload" not in user_client.session


def test_a_kept_file_is_private_to_its_owner(user_client, django_user_model):

    _post(user_client, csv_upload(NO_GPU_TYPE))
    kept = dict(user_client.session["purchase_mix_staged_upload"])
    other = django_user_model.objects.create_user("mallory", password="pw-mallory-1")
    client = signed_in(other)
    session = client.session
    session["purchase_mix_staged_upload"] = kept  # even a stolen token reads nothing
    session.save()
    response = client.post(UPLOAD, {"fmt": "generic", "duplicate_ids": "refuse",
                                    "default_gpu_type": "a100-80gb"})
    assert response.status_code == 400
    assert "Choose a job history file to upload" in response.content.decode()
    assert History.objects.count() == 0


def test_kept_files_expire(user_client):
    from django.core.files.storage import default_storage

    from planner.purchase_mix.staging import staging_sweep

    _post(user_client, csv_upload(NO_GPU_TYPE))
    kept = user_client.session["purchase_mix_staged_upload"]["token"]
    owner = user_client.session["_auth_user_id"]
    assert default_storage.exists(f"staging/{owner}/{kept}")
    assert staging_sweep(max_age_seconds=-1) >= 1
    assert not default_storage.exists(f"staging/{owner}/{kept}")


def test_size_limit_is_413(user_client, settings):
    settings.UPLOAD_MAX_BYTES = 50
    response = _post(user_client, csv_upload(GENERIC_CSV))
    assert response.status_code == 413
    assert "the limit is" in response.content.decode()
    assert History.objects.count() == 0


def test_upload_runs_and_detail_shows_everything(
    user_client, loaded_catalog, eager_celery, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        _post(user_client, file_upload(HELIOS), **HELIOS_FIELDS)
    history = History.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        user_client.post(f"/history/{history.pk}/runs", {"provider": "aws", "region": "us-east-1"})
    run = history.runs.order_by("-id").first()
    assert run.status == "done" and run.progress_pct == 100
    response = user_client.get(f"/history/{history.pk}")
    assert response.status_code == 200
    body = response.content.decode()
    for element in ("chart-demand", "chart-cost", "chart-mix", "chart-waterfall", "chart-trend",
                    "lookback", "backtest", "prices-used", "demand-stats"):
        assert f'id="{element}' in body, element
    assert "vantage" in body.lower() or "skypilot" in body.lower()  # price sources shown
    status = user_client.get(f"/history/{history.pk}/status").json()
    assert status == {"id": run.pk, "status": "done", "progress_pct": 100, "message": "done",
                      "error": "", "is_finished": True, "attempts": 1}


def test_growth_param_recomputes_the_trend(user_client, loaded_catalog, eager_celery,
                                            django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        _post(user_client, file_upload(HELIOS), **HELIOS_FIELDS)
    history = History.objects.get()
    assert "+50%/year" not in user_client.get(f"/history/{history.pk}").content.decode()
    response = user_client.get(f"/history/{history.pk}?growth=50")  # not the cached charts
    report = response.context["report"]
    assert report.trend_growth_per_year == pytest.approx(0.5)
    first, last = report.trend_projected_gpus.iloc[0], report.trend_projected_gpus.iloc[-1]
    days = len(report.trend_projected_gpus)
    assert days == 30  # a 4-day history projects 30 days ahead
    assert last == pytest.approx(first * 1.5 ** ((days - 1) / 365), rel=1e-6)
    assert "+50%/year" in response.content.decode()
    fitted = response.context["report"].trend_fitted_growth_per_year
    if fitted is not None:  # written by the formatter: '-1,134%', not widthratio's '-1134%'
        assert f"Fitted trend: {fmt.percent(fitted, 0)} per year." in response.content.decode()


def test_the_cheapest_place_is_worded_as_the_form_words_it(
    user_client, loaded_catalog, eager_celery, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        _post(user_client, file_upload(HELIOS), **HELIOS_FIELDS)
    history = History.objects.get()
    body = user_client.get(f"/history/{history.pk}").content.decode()
    assert "cheapest that sells commitments" in body and "cheapest offered" not in body
    assert "AWS spot interruptions" in body and "aws spot interruptions" not in body
    # trends through the formatter: '4,069% per year', not widthratio's '4069%'
    assert not re.search(r"Trend: -?\d{4,}%|interval -?\d{4,}%|to -?\d{4,}%", body)
    # peak / mean with one decimal in every row (it mixed '9.5×' and '16.49×')
    stats = body.split('id="demand-stats"', 1)[1].split("</table>", 1)[0]
    ratios = re.findall(r'<td class="num">([^<]*)×</td>', stats)
    assert ratios and all(re.fullmatch(r"\d[\d,]*\.\d", r) for r in ratios), ratios


def test_philly_mapping_with_duration_chart_and_new_run(
    user_client, loaded_catalog, eager_celery, django_capture_on_commit_callbacks
):
    fields = {"column_map": PHILLY_MAP, "time_unit": "min", "origin": "2017-10-01",
              "default_gpu_type": "P100"}
    with django_capture_on_commit_callbacks(execute=True):
        _post(user_client, file_upload(PHILLY), **fields)
    history = History.objects.get()
    assert history.fmt == "mapped"
    body = user_client.get(f"/history/{history.pk}").content.decode()
    assert 'id="unpriced"' in body and "chart-durations" in body and "chart-teams" in body
    with django_capture_on_commit_callbacks(execute=True):
        response = user_client.post(
            f"/history/{history.pk}/runs",
            {"provider": "aws", "region": "us-east-1", "accelerator_map": "P100=v100-sxm2-16gb",
             "spot_aws": "<5%"},
        )
    assert response.status_code == 302
    run = history.runs.order_by("-id").first()
    assert run.status == "done" and run.result["accelerators"] == {"P100": "v100-sxm2-16gb"}
    assert run.result["settings"]["spot_bands"] == {"aws": "<5%"}
    assert 'id="unpriced"' not in user_client.get(f"/history/{history.pk}").content.decode()


def test_a_gpu_name_mapped_to_no_catalog_gpu_is_a_form_error(
    user_client, loaded_catalog, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        _post(user_client, csv_upload(GENERIC_CSV))
    history = History.objects.get()
    response = user_client.post(f"/history/{history.pk}/runs",
                                {"accelerator_map": "A100-80GB=a100-zzz"})
    assert response.status_code == 400
    assert "GPU names: a100-zzz is not a catalog GPU (a10-pcie-24gb, " in response.content.decode()
    assert history.runs.count() == 1  # was queued and analysed as "no catalog GPU matches"


def test_other_user_gets_404(user_client, other_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        _post(user_client, csv_upload(GENERIC_CSV))
    pk = History.objects.get().pk
    assert other_client.get(f"/history/{pk}").status_code == 404
    assert other_client.get(f"/history/{pk}/status").status_code == 404
    assert other_client.post(f"/history/{pk}/runs", {}).status_code == 404
    assert pk not in [h.pk for h in other_client.get("/history/").context["histories"]]


def test_history_list_shows_each_analysis_status(user_client, django_capture_on_commit_callbacks):
    _post(user_client, csv_upload(GENERIC_CSV))
    body = user_client.get("/history/").content.decode()
    history = History.objects.get()
    assert history.name in body and '<span class="tag">queued…</span>' in body
    # the format in words, as the history's own page says it (not the code 'generic')
    assert f"<td>{history.get_fmt_display()}</td>" in body and "<td>generic</td>" not in body


def test_deleting_a_user_deletes_their_kept_upload(user_client, user,
                                                   django_capture_on_commit_callbacks):
    from django.core.files.storage import default_storage

    _post(user_client, csv_upload(NO_GPU_TYPE))
    token = user_client.session["purchase_mix_staged_upload"]["token"]
    path = f"staging/{user.pk}/{token}"
    assert default_storage.exists(path)
    with django_capture_on_commit_callbacks(execute=True):
        user.delete()
    assert not default_storage.exists(path)


def test_a_picked_column_the_file_lacks_is_named_in_words(user_client):
    response = _post(user_client, csv_upload(GENERIC_CSV), map_start="submitted")
    assert response.status_code == 400
    assert ('<p class="field-error" id="id_map_start_error">The file has no column submitted; '
            "pick one of its columns") in response.content.decode()
