"""`referee connect`: a stdio bot relayed to a `referee serve` over TCP."""

from __future__ import annotations

import sys

import click

from .common import env_option, fail, parse_env, run_trio


@click.command("connect", context_settings={"ignore_unknown_options": True})
@click.argument("address", metavar="HOST:PORT")
@click.option("--name", required=True, help="The bot's name in the league.")
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False),
    required=True,
    help="File holding the bot's token.",
)
@click.option(
    "--tls", "use_tls", is_flag=True, help="Over TLS, the server verified with the system's CAs."
)
@click.option(
    "--ca",
    type=click.Path(dir_okay=False),
    default=None,
    help="Over TLS, the server verified with the CAs of this PEM file (implies --tls).",
)
@click.option(
    "--pin",
    metavar="sha256:HEX",
    default=None,
    help="Over TLS, the server's certificate must have this fingerprint, which "
    "`referee serve` prints (implies --tls; no CA check).",
)
@click.option(
    "--nonce",
    metavar="TEXT",
    default=None,
    help="Sent in the login: the bot's contribution to the deals' seeds where the "
    "league mixes them in (up to 128 printable ASCII characters).",
)
@click.option(
    "--receipts",
    metavar="DIRECTORY",
    type=click.Path(file_okay=False),
    default=None,
    help="Keep the receipt of every game the bot plays in this folder (made if need be), "
    "for `referee verify --receipt`.",
)
@click.option(
    "--no-reconnect",
    is_flag=True,
    help="Stop when the first connection ends (without it, a game whose connection drops "
    "is resumed on a new one, and later games played on another).",
)
@env_option
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def connect_cmd(
    address: str,
    name: str,
    token_file: str,
    use_tls: bool,
    ca: str | None,
    pin: str | None,
    nonce: str | None,
    receipts: str | None,
    no_reconnect: bool,
    env_pairs: tuple[str, ...],
    command: tuple[str, ...],
) -> None:
    """Relay a stdio bot to a server: referee connect HOST:PORT --name N --token-file F -- CMD.

    The bot gets the environment of a bot the referee starts (PATH, a scratch folder
    as HOME, TMPDIR and SCRATCH, a UTF-8 locale) and the --env variables, nothing else.
    With --tls, --ca or --pin the server is verified before the token is sent; a
    server that is not the one expected stops the bridge (exit 2)."""
    import logging
    import re
    from pathlib import Path

    from protocol.messages import LOGIN_NONCE_MAX

    from ..bots.process import BotSpec, findable
    from ..bots.tokens import keep_out_of_core_dumps, token_problem
    from ..net.bridge import run_bridge
    from ..net.tls import TlsError, client_context, normal_pin, pin_problem
    from ..text import NAME_RULE, ShownFormatter, name_problem, quoted, shown

    if (problem := name_problem(name)) is not None:
        fail(f"--name {quoted(name)} {problem}; {NAME_RULE}")
    handler = logging.StreamHandler()
    handler.setFormatter(ShownFormatter("referee connect: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    env = parse_env(env_pairs)
    host, sep, port_text = address.rpartition(":")
    if not sep or not host or not port_text.isdigit():
        fail(f"{address}: expected HOST:PORT")
    if pin is not None and (problem := pin_problem(pin)) is not None:
        fail(f"--pin {quoted(pin)}: {problem}")
    if pin is not None and ca is not None:
        fail("--pin and --ca: give one (a pin is checked instead of the CAs)")
    if nonce is not None and not re.fullmatch(rf"[ -~]{{0,{LOGIN_NONCE_MAX}}}", nonce):
        fail(f"--nonce: at most {LOGIN_NONCE_MAX} printable ASCII characters (space to ~)")
    tls = None
    if use_tls or ca is not None or pin is not None:
        try:
            tls = client_context(ca=Path(ca) if ca else None, pin=pin)
        except TlsError as exc:
            fail(str(exc))
    keep_out_of_core_dumps()  # before the token is read
    try:
        token = Path(token_file).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        fail(f"{token_file}: cannot read the token file")
    if not token:
        fail(f"{token_file}: the token file is empty")
    if (problem := token_problem(token)) is not None:
        fail(f"{token_file}: {problem}")
    kept = Path(receipts) if receipts is not None else None
    if kept is not None:
        try:
            kept.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            fail(f"--receipts {receipts}: cannot make the folder: {exc.strerror}")
    if not findable(BotSpec(name=name, argv=command, env=env)):
        fail(f"{command[0]}: no such program, or not executable (the bot's command, after --)")
    try:
        outcome = run_trio(
            lambda: run_bridge(
                host.strip("[]"),
                int(port_text),
                name,
                token,
                command,
                reconnect=not no_reconnect,
                env=env,
                tls=tls,
                pin=normal_pin(pin) if pin is not None else None,
                nonce=nonce,
                receipts=kept,
            )
        )
    except KeyboardInterrupt:
        sys.exit(130)
    if outcome.kind == "done":
        click.echo(f"{name}: the league is over")
        sys.exit(0)
    if outcome.kind == "tls":  # not the server expected: no use trying again
        click.echo(f"referee connect: {shown(address)}: {shown(outcome.detail)}", err=True)
        sys.exit(2)
    if outcome.kind == "unreachable":  # never connected: the address is wrong, or no server
        click.echo(f"referee connect: {shown(outcome.detail)}", err=True)
        sys.exit(2)
    # The detail may quote the server, or the bot.
    click.echo(f"referee connect: {name}: {outcome.kind}: {shown(outcome.detail)}", err=True)
    sys.exit(1)
