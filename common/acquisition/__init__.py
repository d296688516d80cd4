"""Acquisition functions (log EI, UCB) and the feasibility weighting of constrained studies."""
