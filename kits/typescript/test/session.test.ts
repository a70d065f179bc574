// The protocol helper's behaviour on cases the recorded fixtures may not hold
// (ping, unknown messages, bad lines, bye, a failing strategy), and the
// strategy's choices on hand-made requests.
// Run: tsc -p . && node --test build/test/

import * as assert from "node:assert/strict";
import { test } from "node:test";

import type { FromBot, LegalMove, PlayMove, Tile, Train, Turn } from "../src/messages";
import { Choose, Game, Session } from "../src/protocol";
import { choose as strategy } from "../src/strategy";

/** A session whose logs are kept in `logs` instead of going to stderr. */
function newSession(choose: Choose = strategy): { session: Session; logs: string[] } {
  const logs: string[] = [];
  const session = new Session(choose, { name: "typescript-kit", log: (text) => logs.push(text) });
  return { session, logs };
}

/** The replies of `session` to one message. */
function send(session: Session, message: object): FromBot[] {
  return session.receive(JSON.stringify(message)).map((line) => JSON.parse(line) as FromBot);
}

/** A turn request for seat 0 of a 3-seat table with a Mexican train (train 3). */
function makeTurn(hand: Tile[], legal: LegalMove[], markers: boolean[] = [false, false, false]): Turn {
  const trains: Train[] = [0, 1, 2, 3].map((train) => ({
    train,
    owner: train < 3 ? train : -1,
    tiles: [],
    end: 12,
    public: train === 3 || markers[train],
    open_double: false,
    parent: -1,
  }));
  return {
    type: "turn",
    id: 7,
    seat: 0,
    view: {
      round: 0,
      engine: 12,
      hand,
      drawn: null,
      trains,
      markers,
      hand_counts: [hand.length, 15, 15],
      scores: [0, 0, 0],
      boneyard: 40,
      open_doubles: [],
      binding: [],
      step: "start",
      next: 1,
    },
    legal,
    clock: { move_ms: 1000, bank_ms: 30000 },
  };
}

const play = (tile: Tile, train: number): PlayMove => ({ action: "play", tile, train });
const noGame: Game = { start: null, round: null, events: [], random: () => 0, note: null, info: null, say: () => {} };
const choose = (turn: Turn): number | LegalMove => strategy(turn, noGame);

test("ping is answered with the same nonce, even the largest", () => {
  const { session } = newSession();
  assert.deepEqual(session.receive('{"type":"ping","nonce":9007199254740991}'), [
    '{"type":"pong","nonce":9007199254740991}',
  ]);
});

test("unknown types, unknown fields, blank and broken lines are ignored", () => {
  const { session, logs } = newSession();
  assert.deepEqual(session.receive('{"type":"from_the_future","x":1}'), []);
  assert.deepEqual(session.receive(""), []);
  assert.deepEqual(session.receive("not json"), []);
  assert.deepEqual(session.receive("[1,2]"), []);
  const ready = session.receive('{"surprise":true,"type":"hello","protocol":1,"extra":{"a":[]}}\r');
  assert.equal((JSON.parse(ready[0]) as FromBot).type, "ready");
  assert.equal(logs.length, 2, "the two bad lines are logged");
});

test("bye ends the session and nothing after it is answered", () => {
  const { session } = newSession();
  assert.deepEqual(send(session, { type: "bye", reason: "done" }), []);
  assert.equal(session.done, true);
  assert.deepEqual(send(session, { type: "ping", nonce: 1 }), []);
});

test("a strategy that throws still answers legal move 0", () => {
  const { session, logs } = newSession(() => {
    throw new Error("boom");
  });
  const turn = makeTurn([[5, 4]], [play([5, 4], 3), { action: "draw" }]);
  assert.deepEqual(send(session, turn), [{ type: "move", id: 7, index: 0 }]);
  assert.match(logs[0], /boom/);
});

test("a spelled-out choice is sent as its index; an illegal one as 0", () => {
  const turn = makeTurn([[5, 4], [6, 1]], [play([5, 4], 3), play([6, 1], 3), { action: "draw" }]);
  const indexFrom = (choice: number | LegalMove): number => {
    const [reply] = send(newSession(() => choice).session, turn);
    assert.ok(reply.type === "move");
    return reply.index;
  };
  assert.equal(indexFrom(play([1, 6], 3)), 1);
  assert.equal(indexFrom({ action: "draw" }), 2);
  assert.equal(indexFrom(play([6, 6], 3)), 0);
  assert.equal(indexFrom(3), 0);
  assert.equal(indexFrom(0.5), 0);
});

test("the game context holds game_start, the round and every event", () => {
  const seen: { seat?: number; engine?: number; events?: string[]; random?: number } = {};
  const { session } = newSession((_turn, game) => {
    seen.seat = game.start?.seat;
    seen.engine = game.round?.engine;
    seen.events = game.events.map((event) => event.type);
    seen.random = game.random();
    return 0;
  });
  send(session, { type: "game_start", seat: 0, players: 3, seed: 42, rounds: 13 });
  send(session, { type: "round_start", round: 0, engine: 12, hand: [[5, 4]] });
  send(session, { type: "played", seat: 2, tile: [12, 3], train: 3, end: 3 });
  send(session, makeTurn([[5, 4]], [{ action: "draw" }]));
  assert.equal(seen.seat, 0);
  assert.equal(seen.engine, 12);
  assert.deepEqual(seen.events, ["round_start", "played"]);
  const first = seen.random;
  assert.ok(first !== undefined && first >= 0 && first < 1);

  // The same seed gives the same random numbers.
  let again = -1;
  const other = newSession((_turn, game) => {
    again = game.random();
    return 0;
  }).session;
  send(other, { type: "game_start", seat: 1, players: 3, seed: 42, rounds: 13 });
  send(other, makeTurn([[5, 4]], [{ action: "draw" }]));
  assert.equal(again, first);
});

test("strategy: the heaviest tile goes first", () => {
  const turn = makeTurn([[3, 2], [9, 4], [6, 5]], [play([3, 2], 0), play([9, 4], 3), play([6, 5], 0)]);
  assert.equal(choose(turn), 1);
});

test("strategy: a double counts a little more when a tile can follow it", () => {
  const legal = [play([7, 5], 3), play([6, 6], 3)];
  const followed: Tile[] = [[7, 5], [6, 6], [6, 1]];
  const alone: Tile[] = [[7, 5], [6, 6], [2, 1]];
  assert.equal(choose(makeTurn(followed, legal)), 1, "6-6 with 6-1 to follow beats 7-5");
  assert.equal(choose(makeTurn(alone, legal)), 0, "6-6 alone only ties 7-5, listed first");
  const heavier: Tile[] = [[8, 5], [6, 6], [6, 1]];
  assert.equal(choose(makeTurn(heavier, [play([6, 6], 3), play([8, 5], 3)])), 1, "a heavier tile still wins");
});

test("strategy: between equal plays, its own train", () => {
  const hand: Tile[] = [[6, 5], [7, 4]];
  const turn = makeTurn(hand, [play([6, 5], 3), play([7, 4], 0), play([6, 5], 2)], [false, false, true]);
  assert.equal(choose(turn), 1);
});

test("strategy: with no play, end, then draw, then pass", () => {
  const hand: Tile[] = [[1, 0]];
  assert.equal(choose(makeTurn(hand, [{ action: "draw" }, { action: "end" }])), 1);
  assert.equal(choose(makeTurn(hand, [{ action: "pass" }, { action: "draw" }])), 1);
  assert.equal(choose(makeTurn(hand, [{ action: "pass" }])), 0);
});

// game.say(note, info): a note and numbers on the move being chosen, and no other.
test("say puts a note and info on this move only; a move that says nothing is unchanged", () => {
  const { session } = newSession((turn, game) => {
    if (turn.id === 7) game.say("heaviest tile ☕", { estimate: -2.5, worlds: 16 });
    return strategy(turn, game);
  });
  const turn = makeTurn([[5, 4], [6, 1]], [play([5, 4], 3), play([6, 1], 3), { action: "draw" }]);
  assert.deepEqual(session.receive(JSON.stringify(turn)), [
    '{"type":"move","id":7,"index":0,"note":"heaviest tile ☕","info":{"estimate":-2.5,"worlds":16}}',
  ]);
  // The next turn says nothing: the line is the very one of a bot without say.
  assert.deepEqual(session.receive(JSON.stringify({ ...turn, id: 8 })), ['{"type":"move","id":8,"index":0}']);
});

test("say: a long note is cut to 280 code points, never inside a character", () => {
  let note = "a".repeat(279) + "😀bc"; // the emoji, two UTF-16 units, is the 280th character
  const { session } = newSession((_turn, game) => {
    game.say(note);
    return 0;
  });
  const turn = makeTurn([[5, 4]], [{ action: "draw" }]);
  const [sent] = send(session, turn);
  assert.ok(sent.type === "move");
  assert.equal(sent.note, "a".repeat(279) + "😀");
  assert.equal(Array.from(sent.note ?? "").length, 280);
  assert.equal(sent.info, undefined);

  note = "é".repeat(300); // not bytes either: 280 of them
  assert.deepEqual(send(session, turn), [{ type: "move", id: 7, index: 0, note: "é".repeat(280) }]);
  note = "x\ud800y"; // a lone surrogate cannot be sent: U+FFFD instead
  assert.deepEqual(send(session, turn), [{ type: "move", id: 7, index: 0, note: "x\ufffdy" }]);
  note = "";
  assert.deepEqual(session.receive(JSON.stringify(turn)), ['{"type":"move","id":7,"index":0}']);
});

test("say: an info key or value the protocol refuses is dropped and logged; 16 at most", () => {
  let info: Record<string, number> | Map<string, number> = {
    ok: 2,
    "bad key": 1,
    "": 3,
    ["k".repeat(33)]: 4,
    "é": 5,
    nan: NaN,
    inf: -Infinity,
    big: 1e15 + 2,
    text: "3" as unknown as number, // what a JavaScript caller could pass
    max: -1e15,
    "a.b-c_9": 0.5,
  };
  const { session, logs } = newSession((_turn, game) => {
    game.say(null, info);
    return 0;
  });
  const turn = JSON.stringify(makeTurn([[5, 4]], [{ action: "draw" }]));
  assert.deepEqual(session.receive(turn), [
    '{"type":"move","id":7,"index":0,"info":{"ok":2,"max":-1000000000000000,"a.b-c_9":0.5}}',
  ]);
  assert.equal(logs.length, 8, logs.join("\n"));
  assert.match(logs[0], /bad key/);

  info = new Map(Array.from({ length: 20 }, (_, i): [string, number] => [`n${i}`, i]));
  const [sent] = session.receive(turn).map((line) => JSON.parse(line) as FromBot);
  assert.ok(sent.type === "move");
  assert.deepEqual(Object.keys(sent.info ?? {}), Array.from({ length: 16 }, (_, i) => `n${i}`));
  info = { "no good": 1 };
  assert.deepEqual(session.receive(turn), ['{"type":"move","id":7,"index":0}']);
});
