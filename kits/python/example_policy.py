"""A tiny policy of the shape `bot.py --policy` plays: `--policy example_policy:policy`.

A policy is a function from the learning environments' observation (a float32
vector) and action mask (int8, 1 for each legal action id) to an action id. A
network trained in `referee.learn`'s environments has exactly this shape; so has
this hand-written one, which needs nothing but the ids' order
(`referee.learn.encode`): plays come first, tile by tile in the order of the set
(0-0, 1-0, 1-1, 2-0, ..., so a higher id means a tile with a higher high end), and
`draw`, `pass` and `end` are the last three ids.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

NOT_PLAYS = 3  # draw, pass and end: the last three action ids


def policy(observation: npt.NDArray[np.float32], action_mask: npt.NDArray[np.int8]) -> int:
    """Play the legal tile with the highest high end (on the highest train among equals);
    with no tile to play, the first legal action (draw, then pass, then end)."""
    del observation  # this policy reads the mask alone
    legal = np.flatnonzero(action_mask)
    plays = legal[legal < action_mask.size - NOT_PLAYS]
    return int(plays.max()) if plays.size else int(legal[0])
