"""Evaluating models (and people) on incomplete-condition awareness datasets."""
