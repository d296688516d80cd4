"""CoCaBO (Ru et al., ICML 2020): its options, its strategy and its EXP3 bandits."""
