"""The two peaks of one job history, named once: the purchase mix reads demand as hourly
averages of concurrent GPUs (a job running half an hour counts half in its hour), the capacity
replay reads jobs event by event, so the peak it sizes pools up to is the most GPUs running at
one instant. For one file the second is the larger; every page, report, API description and
command labels each with these words."""

PEAK_HOURLY_AVERAGE = "peak hourly-average demand"
PEAK_HOURLY_AVERAGE_HELP = ("the highest hourly average of concurrent GPUs (a job running half "
                            "an hour counts half in its hour)")
PEAK_CONCURRENT = "peak concurrent GPUs"
PEAK_CONCURRENT_HELP = ("the most GPUs running at one instant when no job waits (jobs replayed "
                        "event by event, not hourly averages)")
PEAK_LABELS = {"hourly_average": (PEAK_HOURLY_AVERAGE, PEAK_HOURLY_AVERAGE_HELP),
               "concurrent": (PEAK_CONCURRENT, PEAK_CONCURRENT_HELP)}


def capitalised(label: str) -> str:
    """A label at the start of a line ("Peak concurrent GPUs": str.capitalize would lower
    "GPUs")."""
    return label[:1].upper() + label[1:]
