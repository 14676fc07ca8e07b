"""Workflows: the audit of trained models and of synthetic data, end to end from data to run folder."""
