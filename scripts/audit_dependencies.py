"""pip-audit over requirements.txt (and what it pulls in), against the PyPI advisory data.

Exits 1 on any known vulnerability, printing package, version, advisory and fixed versions.
Packages the PyPI JSON API cannot answer for are listed as not audited; AUDIT_REQUIRE_ALL=1
makes that a failure too (for a machine that reaches the real PyPI). Needs network to PyPI.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    done = subprocess.run(
        [sys.executable, "-m", "pip_audit", "-r", str(ROOT / "requirements.txt"), "-f", "json",
         "--progress-spinner", "off"],
        capture_output=True, text=True, timeout=900, check=False)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        print(f"pip-audit failed (exit {done.returncode}):\n{done.stderr}", file=sys.stderr)
        return 2
    dependencies = report["dependencies"]
    skipped = [d for d in dependencies if "skip_reason" in d]
    found = [(d, v) for d in dependencies for v in d.get("vulns", [])]
    for dependency, vuln in found:
        fixed = ", ".join(vuln.get("fix_versions", [])) or "none yet"
        print(f"VULNERABLE {dependency['name']} {dependency['version']}: {vuln['id']} "
              f"(fixed in {fixed})")
    print(f"pip-audit: {len(dependencies) - len(skipped)} of {len(dependencies)} packages "
          f"audited, {len(found)} known vulnerabilities")
    if skipped:
        names = ", ".join(d["name"] for d in skipped)
        print(f"not audited (the PyPI JSON API has no entry for this version): {names}")
    if found:
        return 1
    return 1 if skipped and os.environ.get("AUDIT_REQUIRE_ALL") == "1" else 0


if __name__ == "__main__":
    sys.exit(main())
