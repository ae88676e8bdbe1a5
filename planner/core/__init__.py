"""Django-free core of job-history upload and GPU purchase-mix recommendation.

Dependencies: stdlib, numpy and pandas, plus two exceptions the feature asks for:
pyarrow (streaming CSV reading in csv_stream/parsing) and scipy (HiGHS linear program in
savings_plan, normal CDF in analysis). No Django, settings or clock; callers pass every
parameter, including random seeds.

Modules: jobs (schemas), parsing (uploads), demand (hourly demand), analysis (statistics),
commitment (exact sizing), spot (checkpoint overhead), savings_plan (LP), offers (prices),
recommend (the mix), backtest (look-back sensitivity, backtest), synthetic (test data).
"""
