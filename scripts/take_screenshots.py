"""Retake the README's two screenshots (docs/img/plan.png, docs/img/purchase-mix.png).

A throwaway site in a temporary VAR_DIR (SQLite, the shipped catalog, tasks run in the web
process), `manage.py runserver` on a free port, and headless Chromium through Playwright:
the worked example's plan, and the purchase mix of a seeded synthetic 100-day job history.

    .venv/bin/python scripts/take_screenshots.py [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "img"
USER, PASSWORD = "ada", "pw-ada-screenshots"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True)


def _small_png(path: Path) -> None:
    """Quantise to 256 colours: a page screenshot keeps its look at a third of the bytes."""
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def _shoot(base: str, chromium: str, jobs_csv: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium,
                                             args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1200, "height": 760})
        page.goto(f"{base}/accounts/login/")
        page.fill("#id_username", USER)
        page.fill("#id_password", PASSWORD)
        page.click("#login-form button[type=submit]")
        page.wait_for_load_state()

        page.goto(f"{base}/plans/example", timeout=300_000)
        page.wait_for_selector(".main-svg", timeout=300_000)
        page.wait_for_timeout(500)
        page.screenshot(path=str(OUT / "plan.png"))

        page.goto(f"{base}/history/upload")
        page.set_input_files("#id_file", str(jobs_csv))
        page.select_option("#upload-form select[name=provider]", "aws")
        page.click("#upload-form button[type=submit]")
        page.wait_for_selector("#what-to-buy", timeout=300_000)
        page.wait_for_selector('[data-figure="chart-demand"][data-drawn="true"] .main-svg',
                               timeout=120_000)
        page.evaluate("document.getElementById('what-to-buy-heading').scrollIntoView()")
        page.evaluate("window.scrollBy(0, -16)")
        page.wait_for_timeout(500)
        page.screenshot(path=str(OUT / "purchase-mix.png"))
        browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="planner-shots-") as var:
        env = {**os.environ, "VAR_DIR": var, "SECRET_KEY": "screenshots-only", "DEBUG": "1",
               "CELERY_TASK_ALWAYS_EAGER": "1", "DJANGO_SETTINGS_MODULE": "planner.settings"}
        env.pop("REDIS_URL", None)
        env.pop("DATABASE_URL", None)
        _manage(env, "migrate", "--noinput", "-v0")
        _manage(env, "load_catalog", "-v0")
        subprocess.run(
            [sys.executable, "-c",
             "import django; django.setup(); from django.contrib.auth.models import User; "
             f"User.objects.create_user({USER!r}, password={PASSWORD!r})"],
            cwd=ROOT, env=env, check=True)
        sys.path.insert(0, str(ROOT))
        import pyarrow.csv as pa_csv

        from planner.purchase_mix.core.synthetic import synthetic_jobs_table

        jobs_csv = Path(var) / "jobs-100-days.csv"
        pa_csv.write_csv(synthetic_jobs_table(6000, seed=3, days=100, growth_over_window=0.0,
                                              interruptible_share=0.1), str(jobs_csv))
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    urllib.request.urlopen(f"{base}/accounts/login/", timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.3)
            _shoot(base, args.chromium, jobs_csv)
        finally:
            server.terminate()
            server.wait(timeout=20)
    for name in ("plan.png", "purchase-mix.png"):
        _small_png(OUT / name)
        print(f"{OUT / name}: {(OUT / name).stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
