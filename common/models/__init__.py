"""common/models."""
