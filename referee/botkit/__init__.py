"""A Python bot's forward model: the engine seen from one seat, and the baseline bots.

- `knowledge`: what one seat has seen of the current round (its own hand and draws,
  every public move), built in-process from engine moves or over the wire from the
  protocol's messages (`tracker`).
- `determinize`: worlds consistent with that knowledge: every hidden tile guessed,
  the opponents' passes and draws respected, the round replayed through the engine
  so that a guessed world gives the seat the same view and legal moves as the real one.
- `plan`: the plan baseline (greedy with a lookahead of the chains the hand can still
  build, and true tile values); `search`: perfect-information Monte Carlo over
  determinized worlds with plan-aware rollouts; both choose from a turn request.
- `rollout`: one round as a mutable model (hands as bitmasks, trains as open ends),
  the engine's rules and legal moves at about three times its speed, for rollouts; held
  equal to the engine move by move in `tests/botkit/test_rollout.py`.

Imports `referee.rules`, `protocol` and `referee` (text) only: no processes, no I/O,
no clock but the deadline a caller hands in. The sample bots (`sample_bots/plan_bot.py`,
`search_bot.py`) and the Python kit run these over the protocol; `referee.learn`
uses the determinizer as OpenSpiel's resampler.
"""
