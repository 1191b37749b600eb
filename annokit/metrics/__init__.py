"""Metrics: agreement between annotators, divergences between distributions, calibration."""
