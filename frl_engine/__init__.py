"""Falling Rule Lists."""
