"""mipkit.mechanisms."""
