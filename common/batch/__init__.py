"""Busy points: the policy (PLAyBOOK, Kriging believer, ignore), PLAyBOOK's penalisation, the
pending points' encoding and the one greedy batch loop."""
