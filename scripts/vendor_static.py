"""Copy plotly.min.js from the pinned plotly package into static/vendor (no CDN, offline)."""

import shutil
from pathlib import Path

import plotly

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    bundle = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    target_dir = ROOT / "static" / "vendor"
    target_dir.mkdir(parents=True, exist_ok=True)
    for old in target_dir.glob("plotly-*.min.js"):
        old.unlink()
    shutil.copyfile(bundle, target_dir / f"plotly-{plotly.__version__}.min.js")


if __name__ == "__main__":
    main()
