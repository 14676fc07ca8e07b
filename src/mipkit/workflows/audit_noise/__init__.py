"""The audit_noise verb."""
