"""The audit verb."""
