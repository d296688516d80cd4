"""common/optim."""
