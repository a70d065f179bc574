// The protocol's messages as TypeScript types, from spec/PROTOCOL.md (the
// referee's own definitions are protocol/messages.py, and `referee schema`
// prints them as JSON Schema). Only what this kit reads or writes is here:
// every message of a game over stdin/stdout (`login`, for TCP, is not).
//
// Types describe the JSON the referee sends; nothing checks them at run time.
// Later protocol versions may add fields and message types: a bot ignores
// what it does not know.

/** A tile: two pips, e.g. [6, 4]. In hands and `legal` the high end comes first. */
export type Tile = [number, number];

/** The rules options of a game (spec/RULES.md, "Options"). */
export interface Rules {
  max_pip: number;
  players: number;
  hand_size: number;
  hand_table: "standard" | "celko" | "denomination";
  rounds: "descending" | "ascending" | "single";
  engine_source: "holder" | "center";
  first_player: "after-holder" | "highest-single";
  first_turn: "single" | "long" | "fast" | "delayed";
  first_turns_complete: boolean;
  first_train_until_stuck: boolean;
  first_train_draws: boolean;
  mexican_train: boolean;
  mexican_start_restricted: boolean;
  must_play: boolean;
  draw_until_playable: boolean;
  doubles_bind: boolean;
  satisfy_order: "any" | "reverse" | "last";
  follow_up: "any" | "on-double";
  own_double_follow_up: "required" | "optional";
  bind_duration: "until-satisfied" | "next-turn";
  any_play_clears_marker: boolean;
  unfinished_own_double_marks: boolean;
  double_blank_score: number;
  teams: boolean;
  branching_doubles: boolean;
  swan_drive: boolean;
  announce_one_tile: boolean;
  announce_penalty: number;
}

/** The clocks, in milliseconds (PROTOCOL.md, "Clocks"). */
export interface Time {
  startup_ms: number;
  move_ms: number;
  bank_ms: number;
  increment_ms: number;
  grace_ms: number;
}

// ---- Referee -> bot -------------------------------------------------------

export interface Hello {
  type: "hello";
  protocol: number;
  referee: string;
  players: number;
  rules: Rules;
  time: Time;
  max_line: number;
}

export interface GameStart {
  type: "game_start";
  game: string;
  seat: number;
  players: number;
  names: string[];
  rules: Rules;
  time: Time;
  /** The bot's own seed, 0 to 2^32 - 1. */
  seed: number;
  rounds: number;
}

export interface RoundStart {
  type: "round_start";
  round: number;
  engine: number;
  hand: Tile[];
  holder: number | null;
  starter: number;
  hand_counts: number[];
  boneyard: number;
  engine_draws: number[];
}

export interface Played {
  type: "played";
  seat: number;
  /** As it lies: tile[0] matched the train's old end. */
  tile: Tile;
  train: number;
  end: number;
  opens_double: boolean;
  branches: number[];
  announce: boolean;
}

export interface Drew {
  type: "drew";
  seat: number;
  /** Shown to the drawer only; null for everyone else. */
  tile: Tile | null;
  reason: "turn" | "penalty";
}

export interface Passed {
  type: "passed";
  seat: number;
}

export interface Marker {
  type: "marker";
  seat: number;
  up: boolean;
}

export interface RoundEnd {
  type: "round_end";
  round: number;
  reason: "out" | "blocked";
  out: number[];
  hands: Tile[][];
  values: number[];
  scores: number[];
  totals: number[];
}

export interface GameEnd {
  type: "game_end";
  scores: number[];
  ranks: number[];
  rounds: number[][];
  reason: string;
  /** This seat's record of a league game; null outside a league. */
  receipt: Record<string, unknown> | null;
}

export interface Ping {
  type: "ping";
  nonce: number;
}

export interface Bye {
  type: "bye";
  reason: string;
}

export interface ErrorMessage {
  type: "error";
  code: string;
  message: string;
  /** The id of the request it is about, or null. */
  request: number | null;
}

/** One train of the view (PROTOCOL.md, "The turn request"). */
export interface Train {
  train: number;
  /** The side that owns it; -1 for the Mexican train. */
  owner: number;
  tiles: Tile[];
  /** The open number a new tile must match. */
  end: number;
  public: boolean;
  open_double: boolean;
  parent: number;
}

/** Everything the seat may know when it must decide. */
export interface View {
  round: number;
  engine: number;
  hand: Tile[];
  drawn: Tile | null;
  trains: Train[];
  markers: boolean[];
  hand_counts: number[];
  scores: number[];
  boneyard: number;
  open_doubles: number[];
  binding: number[];
  step: "start" | "follow" | "continue" | "swan" | "build";
  next: number;
}

export interface PlayMove {
  action: "play";
  tile: Tile;
  train: number;
  /** Present (true) only on a play that announces one tile left. */
  announce?: boolean;
}

export interface OtherMove {
  action: "draw" | "pass" | "end";
}

/** One entry of `turn.legal`. */
export type LegalMove = PlayMove | OtherMove;

export interface Turn {
  type: "turn";
  id: number;
  seat: number;
  view: View;
  /** Every legal move; never empty, and legal[0] is always legal. */
  legal: LegalMove[];
  clock: { move_ms: number; bank_ms: number };
}

/** Every message the referee sends in protocol version 1 (over stdin). */
export type ToBot =
  | Hello
  | GameStart
  | RoundStart
  | Played
  | Drew
  | Passed
  | Marker
  | Turn
  | RoundEnd
  | GameEnd
  | ErrorMessage
  | Ping
  | Bye;

/** The messages of a game that `Game.events` keeps. */
export type GameEvent = RoundStart | Played | Drew | Passed | Marker | RoundEnd;

// ---- Bot -> referee -------------------------------------------------------

export interface Ready {
  type: "ready";
  name: string;
  version?: string;
  author?: string;
  protocol?: number;
}

/** The answer to a turn: by index into `legal` (this kit always answers so). */
export interface Move {
  type: "move";
  id: number;
  index: number;
  /** The bot's own words on its move, at most 280 characters (`game.say`); absent when none. */
  note?: string;
  /** Numbers by name: at most 16 keys of 1 to 32 `A-Z a-z 0-9 _ . -`, values within ±1e15. */
  info?: Record<string, number>;
}

export interface Pong {
  type: "pong";
  nonce: number;
}

export type FromBot = Ready | Move | Pong;
