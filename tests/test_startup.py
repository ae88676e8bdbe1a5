"""A served process settles once started: its views are imported and the objects alive then
are frozen out of the garbage collector's full collections (planner.startup)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_wsgi_application_imports_its_views_and_freezes_the_startup_objects() -> None:
    code = ("import gc, sys; import planner.wsgi; "
            "print(gc.get_freeze_count(), 'planner.plans.views' in sys.modules)")
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
        env={"PATH": "/usr/bin:/bin", "SECRET_KEY": "test-only-secret",
             "DJANGO_SETTINGS_MODULE": "planner.settings"}, timeout=120)
    frozen, views_loaded = out.stdout.split()
    assert int(frozen) > 100_000  # the framework's and the product's modules
    assert views_loaded == "True"
