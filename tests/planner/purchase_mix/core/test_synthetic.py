import io

import pyarrow.csv as pa_csv

from planner.purchase_mix.core.demand import split_hourly_demand
from planner.purchase_mix.core.synthetic import synthetic_jobs_table
from planner.purchase_mix.core.upload.parsing import parse_job_history


def test_synthetic_history_is_seeded_and_parses():
    first = synthetic_jobs_table(2000, seed=3, days=10)
    assert first.equals(synthetic_jobs_table(2000, seed=3, days=10))
    buffer = io.BytesIO()
    pa_csv.write_csv(first, buffer)
    result = parse_job_history(io.BytesIO(buffer.getvalue()), "generic")
    assert result.history is not None and len(result.history.jobs) == 2000
    demand = split_hourly_demand(result.history)
    assert set(demand.gpu_types) == {"A100-80GB", "H100-80GB", "L4"}
