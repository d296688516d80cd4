"""common/space/mixed_space."""
