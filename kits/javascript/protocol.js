// The protocol helper of the JavaScript kit: everything but the strategy.
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
// Session to stdin/stdout for the real bot (see bot.js). Logs go to stderr:
// stdout carries protocol lines only.

"use strict";

const readline = require("node:readline");

const PROTOCOL_VERSION = 1;

// Messages kept in `game.events`: everything that happens during a game.
const EVENT_TYPES = new Set(["round_start", "played", "drew", "passed", "marker", "round_end"]);

// The limits of a move's `note` and `info` (spec/PROTOCOL.md, "The reply"):
// beyond them the reply is malformed, so the helper keeps within them.
const NOTE_MAX = 280; // characters (Unicode code points, not UTF-16 units)
const INFO_KEYS_MAX = 16;
const INFO_KEY = /^[A-Za-z0-9_.-]{1,32}$/;
const INFO_ABS_MAX = 1e15;

// A small seeded generator (mulberry32): the same seed gives the same numbers,
// so a bot that draws its randomness from `game.random()` replays identically.
function seededRandom(seed) {
  let state = seed >>> 0;
  return function random() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// What the bot knows of the game in progress, handed to the strategy with
// every turn request.
//   start   the game_start message (seat, players, names, rules, seed, rounds)
//   round   the latest round_start message (engine, hand dealt, starter, ...)
//   events  every round_start, played, drew, passed, marker and round_end of
//           this game so far, in order (the bot's own plays included)
//   random  a function returning a number in [0, 1), seeded with the game's
//           bot seed
//   say     say(note, info): a note and numbers to send with the move being
//           chosen, and no other (see below)
function newGame(start) {
  const game = {
    start,
    round: null,
    events: [],
    random: seededRandom(start && typeof start.seed === "number" ? start.seed : 0),
    note: null, // what `say` set for the move being chosen; cleared before each turn
    info: null,
    // game.say(note, info), called by the strategy while it chooses: `note` is
    // any text (null or "" for none), `info` numbers by name, as an object or
    // a Map (e.g. {estimate: -2.5, worlds: 16}). Both go with this move only;
    // a second call replaces the first. The referee keeps them in the game log
    // and never sends them to another seat. When the move is sent, the note is
    // cut to 280 characters and an info entry the protocol would refuse is
    // dropped (and logged): see cleanNote and cleanInfo.
    say(note = null, info = null) {
      game.note = note;
      game.info = info;
    },
  };
  return game;
}

// The note as sent: null for none, else at most NOTE_MAX code points (a
// character outside the BMP is one, never cut in half), a lone surrogate
// (which no UTF-8 line can carry) replaced by U+FFFD.
function cleanNote(note) {
  if (note === null || note === undefined || note === "") return null;
  const points = Array.from(String(note)).slice(0, NOTE_MAX);
  return points.map((p) => (p.length === 1 && p >= "\ud800" && p <= "\udfff" ? "\ufffd" : p)).join("");
}

// The info as sent: null for none, else an object of at most INFO_KEYS_MAX
// entries, each key 1 to 32 of A-Z a-z 0-9 _ . - and each value a finite
// number within +-1e15. Any other entry is dropped with a line on `log`; past
// 16 good entries, the rest are dropped (the first 16 are kept, in the order
// Object.entries gives: insertion order, integer-like keys first; a Map's own order).
function cleanInfo(info, log) {
  if (info === null || info === undefined) return null;
  if (typeof info !== "object") {
    log(`info ${String(info).slice(0, 80)} dropped: not an object of numbers`);
    return null;
  }
  const entries = info instanceof Map ? Array.from(info.entries()) : Object.entries(info);
  const clean = Object.create(null); // so that a key "__proto__" is a key like any other
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

// True when a spelled-out move `choice` is the legal move `move`. Tiles match
// in either order; `announce` is false when left out.
function sameMove(choice, move) {
  if (choice.action !== move.action) return false;
  if (move.action !== "play") return true;
  const tile = choice.tile;
  if (!Array.isArray(tile) || tile.length !== 2) return false;
  const [a, b] = move.tile;
  const tileMatches = (tile[0] === a && tile[1] === b) || (tile[0] === b && tile[1] === a);
  return tileMatches && choice.train === move.train && Boolean(choice.announce) === Boolean(move.announce);
}

// The index into `turn.legal` of what the strategy returned (an index, or a
// move spelled out like a `legal` entry), or -1 when it names no legal move.
function indexOfChoice(turn, choice) {
  if (Number.isInteger(choice)) {
    return choice >= 0 && choice < turn.legal.length ? choice : -1;
  }
  if (choice !== null && typeof choice === "object") {
    return turn.legal.findIndex((move) => sameMove(choice, move));
  }
  return -1;
}

class Session {
  // choose(turn, game) is the strategy: it returns an index into turn.legal or
  // one of its entries. name, version and author go into `ready`; log(text)
  // receives diagnostics (stderr by default).
  constructor(choose, { name, version = "1.0", author = "", log = logToStderr } = {}) {
    this.choose = choose;
    this.name = name;
    this.version = version;
    this.author = author;
    this.log = (text) => log(`${name}: ${text}`);
    this.game = null;
    this.done = false; // true once `bye` arrived: nothing more is read
  }

  // One line from the referee in, the lines to send back out (without "\n").
  receive(line) {
    if (this.done) return [];
    const text = line.endsWith("\r") ? line.slice(0, -1) : line;
    if (text.trim() === "") return [];
    let message;
    try {
      message = JSON.parse(text);
    } catch (err) {
      this.log(`ignored a line that is not JSON: ${text.slice(0, 80)}`);
      return [];
    }
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      this.log(`ignored a line that is not a JSON object: ${text.slice(0, 80)}`);
      return [];
    }
    return this.handle(message).map((reply) => JSON.stringify(reply));
  }

  // End of input: the referee is gone. Nothing to answer; the bot exits.
  finish() {
    this.done = true;
    return [];
  }

  // One decoded message in, the messages to send back out.
  handle(message) {
    switch (message.type) {
      case "hello":
        if (message.protocol !== PROTOCOL_VERSION) {
          this.log(`the referee speaks protocol ${message.protocol}; this bot speaks ${PROTOCOL_VERSION}`);
        }
        return [
          { type: "ready", name: this.name, version: this.version, author: this.author, protocol: PROTOCOL_VERSION },
        ];
      case "game_start":
        this.game = newGame(message);
        return [];
      case "turn":
        return [this.answer(message)];
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
      default:
        if (EVENT_TYPES.has(message.type) && this.game !== null) {
          if (message.type === "round_start") this.game.round = message;
          this.game.events.push(message);
        }
        return []; // any other type, including ones added after this kit was written
    }
  }

  // The `move` for a turn request. A strategy that throws or names no legal
  // move costs nothing worse than legal move 0, which is always legal.
  answer(turn) {
    if (this.game === null) this.game = newGame(null); // a turn outside a game: be lenient
    this.game.note = null; // what the strategy says goes with this move only
    this.game.info = null;
    let index = 0;
    try {
      const choice = this.choose(turn, this.game);
      index = indexOfChoice(turn, choice);
      if (index < 0) {
        this.log(`request ${turn.id}: the strategy chose ${JSON.stringify(choice)}, not a legal move; playing legal move 0`);
        index = 0;
      }
    } catch (err) {
      this.log(`request ${turn.id}: the strategy failed (${err && err.stack ? err.stack : err}); playing legal move 0`);
      index = 0;
    }
    const reply = { type: "move", id: turn.id, index };
    try {
      const note = cleanNote(this.game.note);
      const info = cleanInfo(this.game.info, this.log);
      if (note !== null) reply.note = note;
      if (info !== null) reply.info = info;
    } catch (err) {
      // A note or info that cannot even be read (an object whose toString
      // throws) is left out: it never costs the move.
      this.log(`request ${turn.id}: the note or info said is left out (${err})`);
    }
    return reply;
  }
}

function logToStderr(text) {
  process.stderr.write(text + "\n");
}

// Speak the protocol on stdin/stdout until `bye` or end of input, then exit 0.
// Writes to a pipe are synchronous in Node.js on Linux and macOS, so every line
// has left the process when `write` returns: no explicit flush is needed.
function run(choose, options) {
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

module.exports = { Session, run, indexOfChoice, seededRandom, cleanNote, cleanInfo, PROTOCOL_VERSION, NOTE_MAX };
