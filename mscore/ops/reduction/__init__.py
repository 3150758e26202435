"""Reductions: sums, means, extrema, running (cumulative) reductions and statistics."""
