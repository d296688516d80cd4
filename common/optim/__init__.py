"""Acquisition maximisers on the mixed space: continuous (L-BFGS-B), local search in a Hamming
ball and box (CASMOPOLITAN), type-wise ascent on graphs (BO-FM)."""
