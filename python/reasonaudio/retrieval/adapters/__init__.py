"""Built-in retrieval adapters; each module exposes a `from_spec(argument, options)` factory."""
