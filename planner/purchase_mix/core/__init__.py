"""Django-free core of job-history upload and GPU purchase-mix recommendation.

Dependencies: stdlib, numpy and pandas, plus two exceptions the feature asks for:
pyarrow (streaming CSV reading in upload/csv_stream and upload/parsing) and scipy (HiGHS
linear program in savings_plan, normal CDF in analysis). No Django, settings or clock;
callers pass every parameter, including random seeds.

Modules: upload/ (jobs schemas, parsing, streaming CSV, GPU names), demand (hourly demand),
analysis (statistics), commitment (exact sizing), savings_plan (LP), offers (prices),
type_plan, replay (a purchase replayed hour by hour), buy and risk (what to buy: the
recommendation), hindsight (the exact optimum on the past: a reference only), backtest
(look-back sensitivity, backtest), breakdown (charts' data), synthetic (test data). Spot
overhead comes from planner.core.spot (spot_jobs.py applies it per job size).
"""
