"""CASMOPOLITAN (Wan et al., ICML 2021): its options, its strategy, its trust region and the
restart centre."""
