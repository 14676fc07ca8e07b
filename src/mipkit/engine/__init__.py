"""mipkit.engine."""
