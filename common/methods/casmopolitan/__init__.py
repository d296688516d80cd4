"""common/methods/casmopolitan."""
