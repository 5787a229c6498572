"""Desired and live state as typed objects."""
