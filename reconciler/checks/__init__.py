"""Checks over desired and live state: the policy engine, the differ, NVCA's health prediction."""
