from .groups import GROUPS, group  # noqa: F401
