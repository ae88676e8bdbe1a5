"""Purchase mix: upload a job history, analyse its GPU demand, recommend what to buy
(commitments by term, savings plans, on-demand and spot)."""
