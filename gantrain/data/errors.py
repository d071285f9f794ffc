"""The one exception type every dataset reader raises.

Readers fail with :class:`DatasetError` whenever a file is missing, truncated, corrupt or has
the wrong shape, so callers (the CLI, the config loader) can catch one type and show the
message, which always names the offending file, key or shape and what was expected.
"""

from __future__ import annotations


class DatasetError(ValueError):
    """A dataset could not be read: missing, corrupt or malformed input."""
