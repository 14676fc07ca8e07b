"""Tables in, arrays out: reading files, column roles and validation with clear errors.

Mixed-type encodings live in :mod:`mipkit.data.tables`, distances and exact neighbour search in
:mod:`mipkit.data.neighbors` (imported where used: it pulls in joblib and threadpoolctl).
"""

from mipkit.data.io import Dataset, check_columns, features_target, read_table

__all__ = ["Dataset", "check_columns", "features_target", "read_table"]
