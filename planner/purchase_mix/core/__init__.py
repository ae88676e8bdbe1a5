"""Django-free core of job-history upload and GPU purchase-mix recommendation.

Dependencies: stdlib, numpy and pandas, plus two exceptions the feature asks for:
pyarrow (streaming CSV reading in upload/csv_stream and upload/parsing) and scipy (HiGHS
linear program in savings_plan, normal CDF in analysis). No Django, settings or clock;
callers pass every parameter, including random seeds.

Modules: upload/ (jobs schemas, parsing, streaming CSV, GPU names), demand (hourly demand),
analysis (statistics), commitment (exact sizing), savings_plan (LP), offers (prices),
type_plan and recommend (the mix), backtest (look-back sensitivity, backtest), breakdown
(charts' data), synthetic (test data). Spot overhead comes from planner.core.spot.
"""
