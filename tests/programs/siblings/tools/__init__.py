"""A package beside the targets, imported with a relative import inside."""
