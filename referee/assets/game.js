// The results site's replay page: replay.html?game=ID#move=N&view=V loads the game's data
// files on demand (script elements: a page opened from file:// may not fetch), puts the
// viewer's data together (the same as referee/site/gamedata.py `assemble`) and starts the
// one copy of the viewer. View V is "hidden" or "shown" (the full view: the public part
// and every seat's part) or "seatS" (the public part and seat S's part only, so that the
// page holds nothing seat S was not shown).
"use strict";
(function () {
  const parts = {};
  window.siteGame = (key, data) => { parts[key] = data; };
  const query = new URLSearchParams(location.search);
  const game = query.get("game") || "";
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ""));
  const wanted = /^seat(\d+)$/.exec(fragment.get("view") || "");
  const status = document.getElementById("status");

  function fail(text) {
    document.getElementById("move").textContent = text;
  }
  function load(src) {
    return new Promise((resolve, reject) => {
      const el = document.createElement("script");
      el.src = src;
      el.onload = resolve;
      el.onerror = () => reject(new Error("cannot load " + src));
      document.head.appendChild(el);
    });
  }
  function assemble(part, seats, viewer) {
    const N = part.players, TB = part.tb;
    const D = Object.assign({}, part, { seed: null, viewer });
    delete D.X;
    delete D.tb;
    delete D.w;
    D.R = part.R.map((R, r) => Object.assign({}, R, {
      hands: R.hands.map((h, s) => (seats[s] ? seats[s].h[r] : h)),
    }));
    const extras = {};
    for (let k = 0, g = 0; k < part.X.length; k += 2) {
      g += part.X[k];
      extras[g] = part.X[k + 1];
    }
    const count = {}, draws = {};
    const W = part.w, moves = [];
    for (let g = 0; g * W < part.S.length; g++) {
      let v = parseInt(part.S.substr(g * W, W), 36);
      const seat = v % N; v = (v - seat) / N;
      const act = v % 4; v = (v - act) / 4;
      const train = v % TB, tile = (v - train) / TB;
      moves.push([seat, act, tile - 1, train - 1]);
    }
    const options = {};
    Object.keys(seats).forEach((s) => {
      options[s] = unpackOptions(seats[s], moves.filter((m) => m[0] === Number(s)));
    });
    D.S = moves.map(([seat, act, tile, train], g) => {
      const step = [seat, act, tile, train, -1];
      const x = Object.assign({}, extras[g] || {});
      const own = seats[seat];
      if (own) {
        const k = count[seat] || 0;
        count[seat] = k + 1;
        step[4] = own.l[k];
        if (act === 1) {
          step[2] = own.d[draws[seat] || 0];
          draws[seat] = (draws[seat] || 0) + 1;
        }
        Object.assign(x, own.x[k] || {});
        if (options[seat][k].length) x.g = options[seat][k];
      }
      if (Object.keys(x).length) step.push(x);
      return step;
    });
    return D;
  }
  // A seat part's legal moves (gamedata.py `_pack_options`): for each of the seat's own
  // decisions, those other than the move made, which is put back in its place in the
  // engine's order (plays by train, then tile, announced first; then draw, pass, end).
  function unpackOptions(own, made) {
    if (own.g === undefined) return made.map(() => []); // data from before legal moves
    const TB = own.gt, W = own.gw;
    const key = (o) => (o[0] === 0 ? [0, o[2], o[1], o[3] ? 0 : 1] : [1, o[0], 0, 0]);
    const before = (a, b) => {
      const x = key(a), y = key(b);
      for (let i = 0; i < 4; i++) if (x[i] !== y[i]) return x[i] - y[i];
      return 0;
    };
    return own.g.split(",").map((entry, k) => {
      if (!entry) return [];
      const paired = entry[0] === "!";
      const codes = paired ? entry.slice(1) : entry;
      const [, act, tile, train] = made[k];
      const row = act !== 0 ? [[act, -1, -1]] : paired ? [[0, tile, train, 1], [0, tile, train]] : [[0, tile, train]];
      for (let i = 0; i < codes.length; i += W) {
        const v = parseInt(codes.substr(i, W), 36);
        const t = Math.floor(v / TB), tr = v % TB;
        if (t === 0) row.push([tr, -1, -1]);
        else {
          if (paired) row.push([0, t - 1, tr - 1, 1]);
          row.push([0, t - 1, tr - 1]);
        }
      }
      return row.sort(before);
    });
  }

  if (!/^[A-Za-z0-9._-]+$/.test(game)) {
    fail("No such game: this page is opened from the results site's lists.");
    return;
  }
  const base = "games/" + game;
  load(base + ".js")
    .then(() => {
      const part = parts.p;
      let viewer = null;
      let seats = [];
      if (wanted && Number(wanted[1]) < part.players) viewer = Number(wanted[1]);
      if (viewer !== null) seats = [viewer];
      else for (let s = 0; s < part.players; s++) seats.push(s);
      return Promise.all(seats.map((s) => load(base + ".s" + s + ".js"))).then(() => {
        const own = {};
        seats.forEach((s) => { own[s] = parts[s]; });
        window.REPLAY_DATA = assemble(part, own, viewer);
      });
    })
    .then(() => {
      const pages = JSON.parse((document.getElementById("site-bots") || { textContent: "{}" }).textContent);
      window.REPLAY_SITE = {
        game,
        log: "logs/" + game + ".jsonl.gz",
        // A bot's page on the site (none for a name the league does not know).
        botPage: (name) => (Object.prototype.hasOwnProperty.call(pages, name) ? pages[name] : null),
        // Another view: the same page with that view's data, at the same step.
        open(view, place) {
          history.replaceState(history.state, "", "?game=" + encodeURIComponent(game) + "#" + place + "&view=" + view);
          location.reload();
        },
      };
      return load("assets/replay.js");
    })
    .catch((err) => {
      if (status) status.textContent = "";
      fail("This game's replay is not on the site (yet): " + err.message);
    });
})();
