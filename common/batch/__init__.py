"""common/batch."""
