"""Django-free facts and maths both planning features share: cloud facts (hours, terms, spot
bands, storage and egress list prices: cloud), spot checkpoint overhead (Young/Daly: spot)
and JSON-safe serialization (serialize). Stdlib and numpy/pandas only."""
