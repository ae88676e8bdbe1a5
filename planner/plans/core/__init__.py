"""Django-free core of the what-if planner: cost, risk and rank every (configuration × price)
option. Modules by job: fields (the scenario field table), assumptions, options (the option
table), costs, spot_risk (checkpoint/restart Monte Carlo), ranking (Pareto and cards), plan
(the pipeline and its result)."""
