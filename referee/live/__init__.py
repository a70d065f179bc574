"""The live feed (issue 43): what spectators may see of a league's games while they are
played, served over HTTP from inside the referee's trio process.

- `feed`: the games of a run and what each may show now: nothing of a game whose deal
  another game still plays (the embargo), the public view move by move where the
  organiser allows it (`live = "public"`, never with duplicate deals), the whole game
  once its deal is over; every snapshot checked again before it is sent (fails closed).
- `server`: the pages and the event streams (Starlette on hypercorn's trio worker).

May import the engine, the game's recorder, the logs (the replay page's data) and
`referee` itself; the league hands it its games.
"""
