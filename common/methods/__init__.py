"""common/methods."""
