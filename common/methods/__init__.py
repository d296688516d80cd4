"""The methods: each method's options (light, checked at construction) build its strategy
(``suggest(space, history, n, rng)``), which composes models, acquisition and optimisers."""
