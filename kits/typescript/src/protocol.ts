// The protocol helper of the TypeScript kit: everything but the strategy.
//
// spec/PROTOCOL.md is the whole contract. In short, the referee sends one JSON
// object per line on stdin and the bot answers on stdout, one line per answer:
//
//   hello -> ready        turn -> move        ping -> pong
//   bye or end of input -> exit with status 0
//   anything else (events, game_start, round_end, game_end, message types and
//   fields from a later version) -> remembered or ignored, never fatal
//
// `Session` does all of this without touching a process: feed it one input
// line with `receive(line)` and it returns the lines to write (usually none or
// one). That is what the unit test drives. `run(choose, options)` connects a
// Session to stdin/stdout for the real bot (see bot.ts). Logs go to stderr:
// stdout carries protocol lines only.

import * as readline from "node:readline";

import type { FromBot, GameEvent, GameStart, LegalMove, Move, RoundStart, ToBot, Turn } from "./messages";

export const PROTOCOL_VERSION = 1;

// The limits of a move's `note` and `info` (spec/PROTOCOL.md, "The reply"):
// beyond them the reply is malformed, so the helper keeps within them.
export const NOTE_MAX = 280; // characters (Unicode code points, not UTF-16 units)
export const INFO_KEYS_MAX = 16;
const INFO_KEY = /^[A-Za-z0-9_.-]{1,32}$/;
const INFO_ABS_MAX = 1e15;

/** Numbers by name for `game.say`: a plain object or a Map. */
export type Info = Record<string, number> | Map<string, number>;

/** What the bot knows of the game in progress, handed to the strategy with every turn. */
export interface Game {
  /** The game_start message (seat, players, names, rules, seed, rounds); null outside a game. */
  start: GameStart | null;
  /** The latest round_start message: the engine, the hand dealt, the starter. */
  round: RoundStart | null;
  /** Every round_start, played, drew, passed, marker and round_end of this game so far. */
  events: GameEvent[];
  /** A number in [0, 1), seeded with the game's bot seed: the same game replays the same way. */
  random: () => number;
  /** What `say` set for the move being chosen (null: nothing); cleared before each turn. */
  note: string | null;
  info: Info | null;
  /**
   * A note (any text; null or "" for none) and numbers by name to send with the
   * move being chosen, and no other: `game.say("why", { estimate: -2.5, worlds: 16 })`.
   * A second call replaces the first. The referee keeps them in the game log and
   * never sends them to another seat. When the move is sent, the note is cut to
   * 280 characters and an info entry the protocol would refuse is dropped and
   * logged (see cleanNote and cleanInfo).
   */
  say(note?: string | null, info?: Info | null): void;
}

/** The strategy: an index into `turn.legal`, or one of its entries. */
export type Choose = (turn: Turn, game: Game) => number | LegalMove;

export interface SessionOptions {
  /** The name sent in `ready`. */
  name: string;
  version?: string;
  author?: string;
  /** Where diagnostics go; stderr by default. */
  log?: (text: string) => void;
}

/** A small seeded generator (mulberry32): the same seed gives the same numbers. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function newGame(start: GameStart | null): Game {
  const game: Game = {
    start,
    round: null,
    events: [],
    random: seededRandom(start !== null ? start.seed : 0),
    note: null,
    info: null,
    say(note: string | null = null, info: Info | null = null): void {
      game.note = note;
      game.info = info;
    },
  };
  return game;
}

/**
 * The note as sent: null for none, else at most NOTE_MAX code points (a
 * character outside the BMP is one, never cut in half), a lone surrogate (which
 * no UTF-8 line can carry) replaced by U+FFFD.
 */
export function cleanNote(note: unknown): string | null {
  if (note === null || note === undefined || note === "") return null;
  const points = Array.from(String(note)).slice(0, NOTE_MAX);
  return points.map((p) => (p.length === 1 && p >= "\ud800" && p <= "\udfff" ? "\ufffd" : p)).join("");
}

/**
 * The info as sent: null for none, else an object of at most INFO_KEYS_MAX
 * entries, each key 1 to 32 of A-Z a-z 0-9 _ . - and each value a finite
 * number within ±1e15. Any other entry is dropped with a line on `log`; past 16
 * good entries the rest are dropped (the first 16 are kept, in the order
 * Object.entries gives: insertion order, integer-like keys first; a Map's own order).
 */
export function cleanInfo(info: unknown, log: (text: string) => void): Record<string, number> | null {
  if (info === null || info === undefined) return null;
  if (typeof info !== "object") {
    log(`info ${String(info).slice(0, 80)} dropped: not an object of numbers`);
    return null;
  }
  const entries: [unknown, unknown][] = info instanceof Map ? Array.from(info.entries()) : Object.entries(info);
  const clean: Record<string, number> = Object.create(null); // so that "__proto__" is a key like any other
  let count = 0;
  for (const [key, raw] of entries) {
    const value = typeof raw === "bigint" ? Number(raw) : raw;
    if (typeof key !== "string" || !INFO_KEY.test(key)) {
      log(`info key ${JSON.stringify(String(key)).slice(0, 80)} dropped: a key is 1 to 32 of A-Z a-z 0-9 _ . -`);
    } else if (typeof value !== "number" || !Number.isFinite(value) || Math.abs(value) > INFO_ABS_MAX) {
      log(`info ${key} dropped: ${String(raw).slice(0, 40)} is not a number from -1e15 to 1e15`);
    } else if (count >= INFO_KEYS_MAX) {
      log(`info ${key} dropped: at most ${INFO_KEYS_MAX} numbers`);
    } else {
      clean[key] = value;
      count += 1;
    }
  }
  return count > 0 ? clean : null;
}

/** True when a spelled-out move is the legal move `move`: tiles in either order, `announce` false when absent. */
function sameMove(choice: LegalMove, move: LegalMove): boolean {
  if (choice.action !== move.action) return false;
  if (choice.action !== "play" || move.action !== "play") return true;
  const [a, b] = move.tile;
  const [x, y] = choice.tile;
  const tileMatches = (x === a && y === b) || (x === b && y === a);
  return tileMatches && choice.train === move.train && Boolean(choice.announce) === Boolean(move.announce);
}

/** The index into `turn.legal` of what the strategy chose, or -1 when it names no legal move. */
export function indexOfChoice(turn: Turn, choice: number | LegalMove): number {
  if (typeof choice === "number") {
    return Number.isInteger(choice) && choice >= 0 && choice < turn.legal.length ? choice : -1;
  }
  return turn.legal.findIndex((move) => sameMove(choice, move));
}

function logToStderr(text: string): void {
  process.stderr.write(text + "\n");
}

function describe(err: unknown): string {
  return err instanceof Error && err.stack !== undefined ? err.stack : String(err);
}

export class Session {
  /** True once `bye` (or the end of input) arrived: nothing more is read. */
  done = false;
  private game: Game | null = null;
  private readonly log: (text: string) => void;

  constructor(private readonly choose: Choose, private readonly options: SessionOptions) {
    const sink = options.log ?? logToStderr;
    this.log = (text) => sink(`${options.name}: ${text}`);
  }

  /** One line from the referee in, the lines to send back out (without "\n"). */
  receive(line: string): string[] {
    if (this.done) return [];
    const text = line.endsWith("\r") ? line.slice(0, -1) : line;
    if (text.trim() === "") return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      this.log(`ignored a line that is not JSON: ${text.slice(0, 80)}`);
      return [];
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      this.log(`ignored a line that is not a JSON object: ${text.slice(0, 80)}`);
      return [];
    }
    // The referee's messages are trusted to have the shapes of messages.ts;
    // a type this kit does not know falls through to the default below.
    return this.handle(parsed as ToBot).map((reply) => JSON.stringify(reply));
  }

  /** End of input: the referee is gone. Nothing to answer; the bot exits. */
  finish(): string[] {
    this.done = true;
    return [];
  }

  private handle(message: ToBot): FromBot[] {
    switch (message.type) {
      case "hello":
        if (message.protocol !== PROTOCOL_VERSION) {
          this.log(`the referee speaks protocol ${message.protocol}; this bot speaks ${PROTOCOL_VERSION}`);
        }
        return [
          {
            type: "ready",
            name: this.options.name,
            version: this.options.version ?? "1.0",
            author: this.options.author ?? "",
            protocol: PROTOCOL_VERSION,
          },
        ];
      case "game_start":
        this.game = newGame(message);
        return [];
      case "turn":
        return [this.move(message)];
      case "ping":
        return [{ type: "pong", nonce: message.nonce }];
      case "game_end":
        this.log(`game over: scores ${JSON.stringify(message.scores)}, ranks ${JSON.stringify(message.ranks)}`);
        this.game = null;
        return [];
      case "error":
        this.log(`the referee says ${message.code}: ${message.message}`);
        return [];
      case "bye":
        this.done = true;
        return [];
      case "round_start":
      case "played":
      case "drew":
      case "passed":
      case "marker":
      case "round_end":
        if (this.game !== null) {
          if (message.type === "round_start") this.game.round = message;
          this.game.events.push(message);
        }
        return [];
      default:
        return []; // a message type added after this kit was written
    }
  }

  /**
   * The `move` for a turn request, with what the strategy said about it
   * (`game.say`), if anything: a move that says nothing is `{type, id, index}`.
   */
  private move(turn: Turn): Move {
    if (this.game === null) this.game = newGame(null); // a turn outside a game: be lenient
    const game = this.game;
    game.note = null; // what the strategy says goes with this move only
    game.info = null;
    const reply: Move = { type: "move", id: turn.id, index: this.answer(turn, game) };
    try {
      const note = cleanNote(game.note);
      const info = cleanInfo(game.info, this.log);
      if (note !== null) reply.note = note;
      if (info !== null) reply.info = info;
    } catch (err) {
      // A note or info that cannot even be read (an object whose toString
      // throws) is left out: it never costs the move.
      this.log(`request ${turn.id}: the note or info said is left out (${describe(err)})`);
    }
    return reply;
  }

  /**
   * The index of the move to play. A strategy that throws or names no legal
   * move costs nothing worse than legal move 0, which is always legal.
   */
  private answer(turn: Turn, game: Game): number {
    try {
      const choice = this.choose(turn, game);
      const index = indexOfChoice(turn, choice);
      if (index >= 0) return index;
      this.log(`request ${turn.id}: the strategy chose ${JSON.stringify(choice)}, not a legal move; playing legal move 0`);
    } catch (err) {
      this.log(`request ${turn.id}: the strategy failed (${describe(err)}); playing legal move 0`);
    }
    return 0;
  }
}

/**
 * Speak the protocol on stdin/stdout until `bye` or end of input, then exit 0.
 * Writes to a pipe are synchronous in Node.js on Linux and macOS, so every
 * line has left the process when `write` returns: no explicit flush is needed.
 */
export function run(choose: Choose, options: SessionOptions): void {
  const session = new Session(choose, options);
  const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  input.on("line", (line) => {
    for (const reply of session.receive(line)) process.stdout.write(reply + "\n");
    if (session.done) input.close();
  });
  input.on("close", () => {
    session.finish();
    process.exit(0);
  });
}
