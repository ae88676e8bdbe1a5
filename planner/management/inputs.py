"""What the planner's commands check before any work: the job file they read and the report
file they write (one message each, as a CommandError)."""

from pathlib import Path

from django.core.management.base import CommandError

from planner.reports.services import report_path_check


def job_file(path: Path) -> Path:
    """`path` if it is a file; CommandError saying it is missing or a folder."""
    if not path.is_file():
        what = "a folder, not a file" if path.is_dir() else "no such file"
        raise CommandError(f"{path}: {what}")
    return path


def report_path(path: Path | None) -> None:
    """Refuse a --report path the report cannot be written to (extension, PDF libraries,
    folder) before the command's computation; nothing when no report is asked for."""
    if path is None:
        return
    try:
        report_path_check(path)
    except ValueError as exc:
        raise CommandError(f"report: {exc}") from None
