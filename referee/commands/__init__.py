"""The commands of `referee`, one module each; `referee.cli` assembles them into
the click group. What several commands share lives in `common` (every command)
and `league_options` (`league` and `serve`); a command's module holds its
options and the few lines that turn them into library calls; `play_game` and
`sprt_match` are the larger halves of `play` and `match`.

The only package that imports click (with `referee.cli`), and the only one that may
import all the others.
"""
