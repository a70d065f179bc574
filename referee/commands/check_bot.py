"""`referee check-bot`: a bot checked against the protocol before a league."""

from __future__ import annotations

import shlex
import sys

import click

from ..rules import RulesError, preset
from .common import AUTHOR_SANDBOX, env_option, fail, parse_env, run_trio, sandbox_option


@click.command(
    "check-bot", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}
)
@click.option(
    "--rules",
    "rules_names",
    multiple=True,
    help="Check only these presets (repeatable); default: every preset and the variants.",
)
@click.option(
    "--full",
    is_flag=True,
    help="Play every game whole (every round: 13 on double-12). Default: one round of each "
    "seat count and variant, and one whole game of each preset at 4 players.",
)
@click.option("--move-ms", type=int, default=1000, show_default=True, help="Time per move.")
@click.option("--bank-ms", type=int, default=30000, show_default=True, help="Time bank a game.")
@click.option("--startup-ms", type=int, default=10000, show_default=True, help="Time to ready.")
@click.option("--name", default=None, help="Name for the bot in the report.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@sandbox_option(AUTHOR_SANDBOX)
@env_option
def check_bot_cmd(
    sandbox: str | None,
    env_pairs: tuple[str, ...],
    rules_names: tuple[str, ...],
    full: bool,
    move_ms: int,
    bank_ms: int,
    startup_ms: int,
    name: str | None,
    command: tuple[str, ...],
) -> None:
    """Check a bot against the protocol: referee check-bot [OPTIONS] -- CMD [ARGS...]."""

    from pathlib import Path

    from protocol.messages import TimeControl

    from ..bots.process import BotSpec, missing_script, unstartable
    from ..bots.sandbox import INTERPRETERS
    from ..game.checkbot import battery, check_bot, stderr_file
    from ..text import NAME_RULE, name_problem, quoted, shown
    from .play_game import time_control

    for rules_name in rules_names:
        try:
            preset(rules_name)
        except RulesError as exc:
            fail(str(exc))
    argv = tuple(command)
    if len(argv) == 1 and " " in argv[0]:
        argv = tuple(shlex.split(argv[0]))
    env = parse_env(env_pairs)
    if name is not None and (problem := name_problem(name)) is not None:
        fail(f"--name {quoted(name)} {problem}; {NAME_RULE}")
    if name is None:  # the program, as the report calls it
        name = argv[0] if name_problem(argv[0]) is None else "bot"
    spec = BotSpec(name=name, argv=argv, env=env, sandbox=sandbox or AUTHOR_SANDBOX)
    # A program that is not there, or a script its interpreter would not find, is a
    # mistyped command: one line naming it (exit 2), not a failed check.
    problem = unstartable(spec) or missing_script(spec)
    script = argv[1] if len(argv) > 1 and INTERPRETERS.fullmatch(Path(argv[0]).name) else ""
    if problem is None and script.startswith("/") and not Path(script).exists():
        problem = f"{script!r}: no such file"  # checked here, where it runs
    if problem is not None:
        fail(f"{shown(spec.command)}: cannot start it: {problem}")
    if spec.sandbox != "none":
        import os

        from ..bots.sandbox import SandboxError, check_bwrap, check_visible

        problem = check_bwrap()
        if spec.sandbox == "auto":
            mode = "none" if problem else "bwrap"
            click.echo(f"sandbox auto: {mode}" + (f" ({problem})" if problem else ""))
            spec = BotSpec(name=spec.name, argv=argv, env=env, sandbox=mode)
        else:
            click.echo(f"sandbox bwrap: {'works on this machine' if problem is None else problem}")
            if problem is not None:
                sys.exit(1)
        if spec.sandbox == "bwrap":
            try:
                check_visible(argv, cwd=None, path_env=env.get("PATH", os.environ.get("PATH")))
            except SandboxError as exc:
                click.echo(f"sandbox bwrap: {shown(exc)}")
                sys.exit(1)
    plan = battery(rules_names or None, full_games=full)
    default = TimeControl()
    time = time_control((startup_ms, move_ms, bank_ms, default.increment_ms, default.grace_ms))
    stderr_path = stderr_file()
    click.echo(f"checking {shown(spec.command)}")
    checks = run_trio(
        lambda: check_bot(
            spec,
            plan=plan,
            time=time,
            stderr_path=stderr_path,
            report=lambda check: click.echo(shown(check.line())),  # it may quote the bot
        )
    )
    passed = sum(1 for c in checks if c.ok)
    failed = len(checks) - passed
    if failed == 0 or stderr_path.stat().st_size == 0:
        stderr_path.unlink(missing_ok=True)  # kept only when it may explain a failure
    else:
        click.echo(f"the bot's stderr is kept in {stderr_path}")
    verdict = "conforms" if failed == 0 else "does not conform"
    click.echo(f"check-bot: {passed} checks passed, {failed} failed: the bot {verdict}")
    sys.exit(0 if failed == 0 else 1)
