"""mixbo's Ray Tune searchers."""
