#!/usr/bin/env node
// The bot: `node bot.js` speaks the protocol on stdin/stdout with the strategy
// of strategy.js. Nothing to change here; write your strategy in strategy.js.

"use strict";

const { run } = require("./protocol");
const { choose } = require("./strategy");

run(choose, { name: "javascript-kit", version: "1.0", author: "starter kit" });
