"""mipkit.game."""
