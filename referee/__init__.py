"""The Mexican Train referee: the shell around the pure engine in `referee.rules`.

Bot processes, clocks, games, logs and the command line live here; decisions
about the game live in `referee.rules`, and the wire format in `protocol`.
"""

__version__ = "0.1.0"
