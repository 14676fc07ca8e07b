"""The audit_synthetic verb."""
