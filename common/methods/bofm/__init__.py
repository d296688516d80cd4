"""BO-FM (Oh et al., UAI 2021): its options, its strategy and its frequency-modulated GP."""
