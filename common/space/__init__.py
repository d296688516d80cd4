"""The search space and what is observed in it: parameters and their encoding, conditions,
the one definition of the same configuration, and the history."""
