"""The incomplete-condition awareness benchmark: build datasets, then review them."""
