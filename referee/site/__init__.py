"""The results site of a league (`referee site OUT`, `league --site`, `serve --site`):
static pages that open from disk or any static host, with no request leaving them.

- `build`: what is published and when, the files written (each replaced atomically);
- `gamedata`: a game's replay data, a public part and one part per seat;
- `pages`: the index, the bot pages and the replay page, as HTML with SVG charts;
- `live`: the site refreshed in a worker thread while a league runs;
- its scripts and styles (the tables', the replay page's data loader) are in
  `referee/assets/`, beside the replay viewer they embed.

May import everything below the network: `referee.league`, `referee.logs`,
`referee.game`, `referee.bots`, `referee.stats`, the engine and `protocol`.
"""

from __future__ import annotations

from .build import SiteError, SiteReport, build_site

__all__ = ["SiteError", "SiteReport", "build_site"]
