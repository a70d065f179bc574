#!/usr/bin/env node
// A Mexican Train bot in plain Node.js (no npm packages): `node sample_bots/js/bot.js`.
//
// Protocol v1 (spec/PROTOCOL.md): one JSON object per line on stdin and stdout.
// It answers hello with ready, ping with pong, every turn request with a move,
// exits on bye, and ignores every other message type, known or not.
//
// Strategy: play the heaviest tile it can; a double counts extra when a tile
// to follow it stays in hand; between equal plays, its own train first. It
// never draws, passes or ends a turn while it can play. Logs go to stderr only.

"use strict";

const readline = require("readline");

const NAME = "heaviest-js";

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

function log(text) {
  process.stderr.write(`${NAME}: ${text}\n`);
}

function pips(tile) {
  return tile[0] + tile[1];
}

// How good a play is: its pips, plus a bonus for a double it can follow.
function value(move, turn) {
  const [a, b] = move.tile;
  const hand = turn.view.hand;
  let score = pips(move.tile) * 10;
  if (a === b) {
    const rest = hand.filter((t) => !(t[0] === a && t[1] === b));
    score += rest.some((t) => t[0] === a || t[1] === a) ? 50 : -20;
  }
  if (move.train === turn.seat) score += 1; // equal plays: own train first
  if (move.announce) score += 0.5; // an announced play is never penalised
  return score;
}

// The index of the chosen move in turn.legal.
function choose(turn) {
  let best = -1;
  let bestValue = -Infinity;
  turn.legal.forEach((move, i) => {
    if (move.action !== "play") return;
    const v = value(move, turn);
    if (v > bestValue) {
      best = i;
      bestValue = v;
    }
  });
  if (best >= 0) return best;
  for (const action of ["end", "draw", "pass"]) {
    const i = turn.legal.findIndex((move) => move.action === action);
    if (i >= 0) return i;
  }
  return 0;
}

function handle(msg) {
  switch (msg.type) {
    case "hello":
      if (msg.protocol !== 1) log(`referee speaks protocol ${msg.protocol}; this bot speaks 1`);
      send({ type: "ready", name: NAME, version: "1.0", author: "sample bots", protocol: 1 });
      break;
    case "turn": {
      let index = 0;
      try {
        index = choose(msg);
      } catch (err) {
        log(`choose failed (${err}); playing legal move 0`);
      }
      send({ type: "move", id: msg.id, index });
      break;
    }
    case "ping":
      send({ type: "pong", nonce: msg.nonce });
      break;
    case "error":
      log(`referee says ${msg.code}: ${msg.message}`);
      break;
    case "bye":
      process.exit(0);
      break;
    default:
      break; // game_start, events, round_end, game_end, and any type added later
  }
}

const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on("line", (line) => {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (err) {
    log(`not JSON, ignored: ${line.slice(0, 80)}`);
    return;
  }
  if (msg !== null && typeof msg === "object") handle(msg);
});
input.on("close", () => process.exit(0));
