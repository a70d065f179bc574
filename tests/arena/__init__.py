"""Tests of `referee.arena`: the rating refit and the separation of the final."""
