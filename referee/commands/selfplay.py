"""`referee selfplay`: one game between in-process random players."""

from __future__ import annotations

import click

from ..game import selfplay as selfplay_mod
from ..rules import RulesError, preset
from .common import fail, parse_sets


@click.command("selfplay")
@click.option("--rules", "rules_name", default="standard", show_default=True, help="Preset.")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override one option.")
@click.option("--players", type=int, default=None, help="Number of seats (overrides the preset).")
@click.option("--seed", type=int, default=1, show_default=True, help="Game seed.")
def selfplay_cmd(rules_name: str, sets: tuple[str, ...], players: int | None, seed: int) -> None:
    """Play one game between in-process random players and print the scores by round."""
    from ..game.match import seed_problem

    if (problem := seed_problem(seed)) is not None:
        fail(f"--seed {problem}")
    overrides: dict[str, object] = dict(parse_sets(sets))
    if players is not None:
        overrides["players"] = players
    try:
        rules = preset(rules_name, **overrides)
    except RulesError as exc:
        fail(str(exc))
    selfplay_mod.run(rules, seed)
