"""A target whose module cannot be imported: dnsse must say so and exit 2."""

import a_module_that_does_not_exist  # noqa: F401


def main():
    pass
