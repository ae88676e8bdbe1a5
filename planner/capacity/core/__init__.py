"""Django-free core of capacity planning with queues.

Dependencies: stdlib, numpy, pandas and numba (the event loop of the pool simulator is
compiled; a pure-Python loop over a million jobs takes minutes per point). No Django,
settings or clock.

Modules: jobs (the jobs of one GPU type, wait limits per policy), pool (the trace-driven
pool simulator), points (one point's figures and dollars), prices (the pool's $/GPU-hour,
owned hardware included), frontier (the sweep grid, its parts, the recommendation).
"""
