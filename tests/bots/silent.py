"""Answers hello and ping, never answers a turn, ignores bye, reads until end of input."""

from _common import serve

serve("silent", lambda turn: None, exit_on_bye=False)
