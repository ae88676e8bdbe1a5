"""Your own measured runs: upload them, see the model's error on them, fit a calibration."""
