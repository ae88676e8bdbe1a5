"""Reading uploads: job and usage schemas, streaming CSV, formats, values, GPU names."""
