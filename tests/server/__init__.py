"""Tests of `referee serve` and `referee connect`."""
