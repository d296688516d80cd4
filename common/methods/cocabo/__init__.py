"""common/methods/cocabo."""
