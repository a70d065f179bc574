"""`referee rules`: the presets and variants, or one resolved as TOML."""

from __future__ import annotations

import click

from ..rules import PRESET_SOURCES, PRESETS, VARIANTS, RulesError, preset, to_toml
from .common import fail, parse_sets


@click.command("rules")
@click.argument("name", required=False)
@click.option(
    "--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override one option (repeatable)."
)
def rules_cmd(name: str | None, sets: tuple[str, ...]) -> None:
    """List the presets, or print preset NAME[+variant...] resolved as TOML: the [rules]
    table of a league file. A league file takes no `players` (its games' table size is
    `table` in [league]), so the player count the options were resolved for is a comment."""
    if name is None:
        if sets:
            fail("--set needs a preset name: referee rules NAME --set key=value")
        click.echo("Presets (referee rules NAME prints one resolved):")
        for key in PRESETS:
            click.echo(f"  {key:16s} {PRESET_SOURCES[key]}")
        click.echo("Variants (add to any preset with +, e.g. standard+teams):")
        for key in VARIANTS:
            click.echo(f"  {key}")
        return
    try:
        rules = preset(name, **parse_sets(sets))
    except RulesError as exc:
        fail(str(exc))
    click.echo(f"# referee rules {name}" + "".join(f" --set {s}" for s in sets))
    click.echo(f"# players = {rules.players}: in a league file, the table size is [league] table")
    click.echo(to_toml(rules, omit=("players",)), nl=False)
