"""The audit_scores verb."""
