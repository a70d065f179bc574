"""Tests of `referee league`: configuration, schedule, standings, and whole leagues run."""
