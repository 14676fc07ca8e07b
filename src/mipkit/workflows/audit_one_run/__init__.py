"""The audit_one_run verb."""
