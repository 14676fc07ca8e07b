"""mipkit.attacks."""
