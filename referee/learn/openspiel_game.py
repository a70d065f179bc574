"""`python_mexican_train`: Mexican Train as an OpenSpiel game, registered on import.

    import pyspiel
    from referee.learn import openspiel_game  # registers the game

    game = pyspiel.load_game("python_mexican_train", {"players": 2, "max_pip": 6, "rounds": 1})

Parameters: `preset` (a preset name, with `+variant`s), `players`, `max_pip` (the
set: 6, 9, 12, 15 or 18) and `rounds` (the game's first N rounds; 0, the default,
plays the whole game).

- **Chance.** Each round begins with chance nodes, one per tile of the round: the
  k-th outcome is the tile at position k of the round's order (outcome = the tile's
  index in the set, uniform over the tiles not yet dealt). `referee.rules.deal_round`
  lays the round out from that order: seat s gets the s-th hand-sized slice, the
  rest is the boneyard, drawn from its end. So every hidden tile, hands and boneyard
  order alike, is an explicit chance outcome.
- **Decisions.** Action ids are `referee.learn.encode`'s, the same as PettingZoo's.
- **Returns.** When a round ends, each seat gains the mean of the other seats'
  points in that round minus its own (`table.round_rewards`). Returns are the sum
  over the rounds played: zero-sum, in points. The reward model is terminal.
- **Observation** (string and tensor): what the seat sees now. The tensor is
  `encode.observation` of the seat's `ViewInfo`, the very vector of the PettingZoo
  environment and of a bot process; the string is that `ViewInfo` as JSON. While a
  round is dealt, the view holds the seat's tiles dealt so far and no trains.
- **Information state** (string and tensor): the string is every message the seat
  received over the protocol this game, without tile identities it could not know
  (a drawn tile's face, another hand), then its own decisions and its view now: the
  public history and the seat's hand now, which decide its legal moves and all it
  can infer. The tensor is the observation, then for each seat from this one on, its
  draws and passes this round (divided by the set's size).
- **Resampling.** `resample_from_infostate(player, sampler)` guesses a world that
  `player` cannot tell from the real one with the bots' determinizer
  (`referee.botkit`): a state with the same information state for `player`, the
  hidden tiles guessed from what the seat's passes and draws revealed. OpenSpiel's
  ISMCTS uses it as it is.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import numpy as np
import pyspiel

from protocol import messages as m

from ..botkit.determinize import Determinizer
from ..botkit.knowledge import Knowledge
from ..game.wire import events, round_start, view_info
from ..rules import Move, MoveKind, RoundResult, Rules, State, Tile, apply, deal_round, full_set
from ..rules import round_tiles as tiles_of_round
from . import encode
from .table import (
    board_text,
    closed_round,
    legal_actions,
    round_limit,
    round_rewards,
    shuffle_hidden,
    table_rules,
    totals,
)

GAME_NAME = "python_mexican_train"
DEFAULTS: dict[str, Any] = {"preset": "standard", "players": 4, "max_pip": 12, "rounds": 0}
MAX_PLAYERS = 16  # the most seats a preset deals to (double-18)

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Mexican Train",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=MAX_PLAYERS,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULTS,
)


def _decisions_per_round(rules: Rules) -> int:
    """An upper bound on the decisions of one round. Each tile is played at most once
    and drawn at most once; a pass follows a draw, or comes with the boneyard empty,
    when within two passes of every seat someone plays or the round ends blocked; an
    `end` closes a turn that played, or a seat's build in the fast first turn."""
    tiles, n = rules.tile_count, rules.players
    return 4 * tiles + 2 * n * (tiles + 2)


class MexicanTrainGame(pyspiel.Game):  # type: ignore[misc]
    """The game for one set of parameters."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        values = {**DEFAULTS, **(params or {})}
        self.rules = table_rules(
            str(values["preset"]), int(values["players"]), int(values["max_pip"])
        )
        self.rounds = round_limit(self.rules, int(values["rounds"]))
        set_points = sum(t.pips for t in full_set(self.rules.max_pip))
        worst = self.rounds * (set_points + self.rules.double_blank_score)
        info = pyspiel.GameInfo(
            num_distinct_actions=encode.action_count(self.rules),
            max_chance_outcomes=self.rules.tile_count,
            num_players=self.rules.players,
            min_utility=-float(worst),
            max_utility=float(worst),
            utility_sum=0.0,
            max_game_length=self.rounds * _decisions_per_round(self.rules),
        )
        super().__init__(_GAME_TYPE, info, params or {})

    def new_initial_state(self) -> MexicanTrainState:
        """The state before the first tile is dealt."""
        return MexicanTrainState(self)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> Observer:
        """The observation (default) or, with perfect recall, the information state."""
        if params:
            raise ValueError(f"{GAME_NAME} takes no observation parameters (got {params})")
        recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        if iig_obs_type is not None and (
            not iig_obs_type.public_info
            or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
        ):
            raise ValueError(f"{GAME_NAME} observes for one seat, public and private parts")
        return Observer(self.rules, information_state=recall)


class _Kept:
    """An engine `State` held by a game state. States are immutable, so copies of the
    game state (OpenSpiel clones with `copy.deepcopy`) share it instead of copying it."""

    __slots__ = ("state",)

    def __init__(self, state: State) -> None:
        self.state = state

    def __deepcopy__(self, memo: dict[int, Any]) -> _Kept:
        return self


class _Guessers:
    """The determinizer of each seat at this very position, which caches the work all
    its guesses share (ISMCTS resamples the same root many times). A copy starts
    empty: its moves may go on differently."""

    __slots__ = ("by_seat",)

    def __init__(self) -> None:
        self.by_seat: dict[int, Determinizer] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> _Guessers:
        return _Guessers()


def _public(message: m.Message) -> str:
    """A message as a seat's information state keeps it: without tile faces the seat
    would not know in every world it cannot tell apart (its own drawn tiles and hand
    are in its view)."""
    if isinstance(message, m.Drew):
        message = msgspec.structs.replace(message, tile=None)
    elif isinstance(message, m.RoundStart):
        message = msgspec.structs.replace(message, hand=[])
    return msgspec.json.encode(message).decode()


def _action_text(rules: Rules, action: int) -> str:
    spec = encode.move_of_action(rules, action)
    if spec.action != "play":
        return spec.action
    assert spec.tile is not None
    announce = " announcing" if spec.announce else ""
    return f"play {spec.tile[0]}-{spec.tile[1]} on train {spec.train}{announce}"


class MexicanTrainState(pyspiel.State):  # type: ignore[misc]
    """A position: a round being dealt (chance), a decision, or the end."""

    def __init__(self, game: MexicanTrainGame) -> None:
        super().__init__(game)
        self.rules = game.rules
        self.rounds = game.rounds
        players = self.rules.players
        self.results: tuple[RoundResult, ...] = ()
        self.totals = [0.0] * players  # each seat's return so far
        self.over = False
        self.round_index = 0
        self.order: list[Tile] = []  # the round's tiles dealt so far, in deal order
        self.pool: list[Tile] = sorted(tiles_of_round(self.rules, 0))  # not dealt yet
        self._engine: _Kept | None = None  # the decision's (or, at the end, the last) State
        # For the determinizer: the round's first decision and the moves since. None in
        # a guessed world, whose own round start is not known.
        self._round_start: _Kept | None = None
        self.moves: list[Move] = []
        self.logs: list[list[str]] = [[] for _ in range(players)]  # see `information_state`
        self.counts = [[0, 0] for _ in range(players)]  # draws and passes this round
        self._guessers = _Guessers()

    # ------------------------------------------------------------ reading

    @property
    def engine_state(self) -> State | None:
        """The engine's state at this decision (at the end: the last one); None while dealing."""
        return self._engine.state if self._engine is not None else None

    @property
    def round_start(self) -> State | None:
        """The engine's state at this round's first decision (None in a guessed world)."""
        return self._round_start.state if self._round_start is not None else None

    def dealing(self) -> bool:
        """True while the current round's tiles are being dealt."""
        return not self.over and self._engine is None

    def current_player(self) -> int:
        if self.over:
            return int(pyspiel.PlayerId.TERMINAL)
        state = self.engine_state
        if state is None:
            return int(pyspiel.PlayerId.CHANCE)
        return state.to_move

    def is_terminal(self) -> bool:
        return self.over

    def returns(self) -> list[float]:
        # Terminal reward model: everything is paid at the end (`totals` keeps the sums
        # of the rounds played so far).
        return list(self.totals) if self.over else [0.0] * self.rules.players

    def rewards(self) -> list[float]:
        return self.returns()

    def _legal_actions(self, player: int) -> list[int]:
        state = self.engine_state
        assert state is not None and player == state.to_move
        return list(legal_actions(state))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        p = 1.0 / len(self.pool)
        return [(encode.tile_index(t.hi, t.lo), p) for t in self.pool]

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            t = full_set(self.rules.max_pip)[action]
            return f"deal {t}"
        return _action_text(self.rules, action)

    def __str__(self) -> str:
        names = [f"seat {s}" for s in range(self.rules.players)]
        head = f"returns {self.totals}\n"
        state = self.engine_state
        if state is None or self.dealing():
            dealt = " ".join(str(t) for t in self.order)
            return f"{head}round {self.round_index + 1}: dealt {dealt}\n"
        boneyard = " ".join(str(t) for t in state.boneyard)
        return f"{head}{board_text(state, self.results, names)}  boneyard: {boneyard}\n"

    # ------------------------------------------------------------ playing

    def _apply_action(self, action: int) -> None:
        self._guessers = _Guessers()
        if self.dealing():
            tile = full_set(self.rules.max_pip)[action]
            self.pool.remove(tile)
            self.order.append(tile)
            if not self.pool:
                self._start_round()
            return
        before = self.engine_state
        assert before is not None
        move = legal_actions(before)[action]
        after = apply(before, move)
        self._record(before, move, after, action)
        result = closed_round(before, after)
        if result is None:
            self._engine = _Kept(after)
            return
        for seat, reward in enumerate(round_rewards(result)):
            self.totals[seat] += reward
        self.results = after.results
        if len(self.results) >= self.rounds:
            self.over = True  # the last decision's table stays as the final view
            return
        self.round_index = len(self.results)
        self.order = []
        self.pool = sorted(tiles_of_round(self.rules, self.round_index))
        self._engine = None
        self._round_start = None

    def _start_round(self) -> None:
        state = deal_round(self.rules, self.round_index, self.results, self.order)
        self._engine = self._round_start = _Kept(state)
        self.moves = []
        self.counts = [[0, 0] for _ in range(self.rules.players)]
        for seat, log in enumerate(self.logs):
            log.append(_public(round_start(state, seat)))

    def _record(self, before: State, move: Move, after: State, action: int) -> None:
        """Keep the move for the determinizer and each seat's messages for its information state."""
        mover = before.to_move
        self.moves.append(move)
        if move.kind is MoveKind.DRAW:
            self.counts[mover][0] += 1
        elif move.kind is MoveKind.PASS:
            self.counts[mover][1] += 1
        self.logs[mover].append(f"I chose {_action_text(self.rules, action)}")
        for event in events(before, move, after):
            for seat, log in enumerate(self.logs):
                message = event.for_seat(seat)
                if message is not None:
                    log.append(_public(message))

    # ------------------------------------------------------------ what a seat sees

    def view(self, seat: int) -> m.ViewInfo:
        """The seat's view now, as a turn request would carry it."""
        state = self.engine_state
        if state is not None:
            return view_info(state, seat)
        # A round being dealt: the seat's tiles so far (seat s gets the s-th slice of
        # the order), the counts dealt so far, no trains yet.
        rules = self.rules
        size, n = rules.hand, rules.players
        dealt = len(self.order)
        mine = sorted(self.order[seat * size : min(dealt, (seat + 1) * size)])
        return m.ViewInfo(
            round=self.round_index,
            engine=rules.engines[self.round_index],
            hand=[(t.hi, t.lo) for t in mine],
            trains=[],
            markers=[False] * n,
            hand_counts=[min(max(dealt - s * size, 0), size) for s in range(n)],
            scores=totals(self.results, n),
            boneyard=max(dealt - n * size, 0),
            open_doubles=[],
            step="start",
            next=(seat + 1) % n,
        )

    def information_state(self, seat: int) -> str:
        """The information-state string (see the module's docstring)."""
        view = msgspec.json.encode(self.view(seat)).decode()
        return "\n".join([f"{GAME_NAME} seat {seat}", *self.logs[seat], f"view {view}"])

    def history_counts(self, seat: int) -> list[float]:
        """Each seat's draws and passes this round, from `seat` on, divided by the set's size."""
        n = self.rules.players
        scale = float(self.rules.tile_count)
        out = []
        for k in range(n):
            draws, passes = self.counts[(seat + k) % n]
            out += [min(draws / scale, 1.0), min(passes / scale, 1.0)]
        return out

    # ------------------------------------------------------------ guessing worlds

    def with_world(self, world: State) -> MexicanTrainState:
        """A copy of this position with `world` for the engine state (same history and
        logs): the other seats' hands and the boneyard as guessed. A guess has no known
        round start, so it cannot be resampled from again."""
        if self.engine_state is None:
            raise ValueError("a world replaces a decision's state, not a deal in progress")
        new: MexicanTrainState = self.clone()
        new._engine = _Kept(world)
        new._round_start = None
        return new

    def resample_from_infostate(
        self, player_id: int, probability_sampler: Any
    ) -> MexicanTrainState:
        """A state `player_id` cannot tell from this one, hidden tiles guessed (see the
        module's docstring); `probability_sampler()` gives uniform numbers in [0, 1)."""
        rng = random.Random(int(probability_sampler() * (1 << 53)))
        if self.over:
            return self.clone()  # type: ignore[no-any-return]
        if self.dealing():
            return self._redeal(player_id, rng)
        return self.with_world(self.guess_world(player_id, rng))

    def guess_world(self, seat: int, rng: random.Random) -> State:
        """An engine state equal to this one in everything `seat` may know."""
        state, start = self.engine_state, self.round_start
        assert state is not None
        if start is None:
            raise ValueError("this state is itself a guessed world: resample from the real one")
        guesser = self._guessers.by_seat.get(seat)
        if guesser is None:
            knowledge = Knowledge.from_moves(start, self.moves, seat)
            guesser = self._guessers.by_seat[seat] = Determinizer(knowledge)
        # Whose move it is is public; a turn's `end` is implied by the next seat's move.
        world = guesser.world(rng, mover=state.to_move)
        if world is None:
            # No world consistent with everything the seat saw was found (the search is
            # bounded): fall back to the public part of the true state, with the tiles
            # the seat cannot see dealt uniformly anew. The seat's view and legal moves
            # are kept; what the others' passes and draws revealed is not used.
            world = shuffle_hidden(state, seat, rng)
        return world

    def _redeal(self, seat: int, rng: random.Random) -> MexicanTrainState:
        """During a deal: the tiles dealt to the others, or still to deal, shuffled."""
        size = self.rules.hand
        mine = range(seat * size, (seat + 1) * size)
        hidden = [i for i in range(len(self.order)) if i not in mine]
        unseen = [self.order[i] for i in hidden] + self.pool
        rng.shuffle(unseen)
        new: MexicanTrainState = self.clone()
        for i in hidden:
            new.order[i] = unseen.pop()
        new.pool = sorted(unseen)
        return new


class Observer:
    """OpenSpiel's observer: the observation, or with `information_state` the information state."""

    def __init__(self, rules: Rules, information_state: bool) -> None:
        self.rules = rules
        self.information_state = information_state
        size = encode.observation_size(rules)
        extra = 2 * rules.players if information_state else 0
        self.tensor = np.zeros(size + extra, np.float32)
        self.dict = {"observation": self.tensor[:size]}
        if information_state:
            self.dict["history"] = self.tensor[size:]

    def set_from(self, state: MexicanTrainState, player: int) -> None:
        """Fill `tensor` with `player`'s view of `state`."""
        size = encode.observation_size(self.rules)
        self.tensor[:size] = encode.observation(self.rules, state.view(player), player)
        if self.information_state:
            self.tensor[size:] = state.history_counts(player)

    def string_from(self, state: MexicanTrainState, player: int) -> str:
        """`player`'s observation or information-state string."""
        if self.information_state:
            return state.information_state(player)
        return f"seat {player} " + msgspec.json.encode(state.view(player)).decode()


pyspiel.register_game(_GAME_TYPE, MexicanTrainGame)
