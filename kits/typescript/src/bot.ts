// The bot: `node build/src/bot.js` (after `tsc -p .`) speaks the protocol on
// stdin/stdout with the strategy of strategy.ts. Nothing to change here; write
// your strategy in strategy.ts.

import { run } from "./protocol";
import { choose } from "./strategy";

run(choose, { name: "typescript-kit", version: "1.0", author: "starter kit" });
