"""mipkit.accounting."""
