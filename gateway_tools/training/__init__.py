"""Fitting the shipped weights: the local reviewer and the write-intent model."""
