"""The synthesize verb."""
