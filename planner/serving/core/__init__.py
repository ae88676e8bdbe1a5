"""The serving plan, Django-free: offers + a model + traffic + targets -> ranked options."""
