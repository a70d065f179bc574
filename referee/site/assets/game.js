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
    for (let g = 0; g * W < part.S.length; g++) moves.push(parseInt(part.S.substr(g * W, W), 36));
    D.S = moves.map((packed, g) => {
      let v = packed;
      const seat = v % N; v = (v - seat) / N;
      const act = v % 4; v = (v - act) / 4;
      const train = v % TB, tile = (v - train) / TB;
      const step = [seat, act, tile - 1, train - 1, -1];
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
      }
      if (Object.keys(x).length) step.push(x);
      return step;
    });
    return D;
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
      window.REPLAY_SITE = {
        game,
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
