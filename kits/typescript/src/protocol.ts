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

import type { FromBot, GameEvent, GameStart, LegalMove, RoundStart, ToBot, Turn } from "./messages";

export const PROTOCOL_VERSION = 1;

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
  return { start, round: null, events: [], random: seededRandom(start !== null ? start.seed : 0) };
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
        return [{ type: "move", id: message.id, index: this.answer(message) }];
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
   * The index of the move to play. A strategy that throws or names no legal
   * move costs nothing worse than legal move 0, which is always legal.
   */
  private answer(turn: Turn): number {
    if (this.game === null) this.game = newGame(null); // a turn outside a game: be lenient
    try {
      const choice = this.choose(turn, this.game);
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
