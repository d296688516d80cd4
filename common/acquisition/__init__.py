"""common/acquisition/functions."""
