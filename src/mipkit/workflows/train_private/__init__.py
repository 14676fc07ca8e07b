"""The train_private verb."""
