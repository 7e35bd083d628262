"""Retraining a project's scorer from its labels: the data, the runs,
the registry of versions, and calibration."""
