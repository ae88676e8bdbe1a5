"""LLM serving: replicas, latency and throughput under load, calibrated on published runs.

models       model shapes (presets) and weight/KV precisions
engine       one replica's physics: prefill (compute-bound GEMMs + attention over the prompt),
             decode (memory-bound reads of weights + KV per step), TP/PP/EP collectives, paged-KV
             capacity (the largest batch)
queueing     continuous batching under load: fixed concurrency, Poisson arrivals (TTFT/TPOT
             P50/P99), offline throughput, goodput under targets and the knee
runs         inference_runs.csv rows -> cases the engine can answer (or the reason it cannot)
fit          the calibration: a few efficiencies fitted with scipy under physical priors
crossval     leave-one-source-out predictions, split-conformal P10-P90 bands, the rule of thumb
plan         rank serving configurations over GPU offers: replicas, $/M tokens, CO2e

Django-free: frozen dataclasses in and out, numpy/pandas/scipy only.
"""
