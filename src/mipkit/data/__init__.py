"""Tables in, arrays out: reading files, column roles and validation with clear errors."""

from mipkit.data.io import Dataset, check_columns, features_target, read_table

__all__ = ["Dataset", "check_columns", "features_target", "read_table"]
