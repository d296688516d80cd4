"""common/methods/bofm."""
