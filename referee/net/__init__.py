"""The network: bots of a league over TCP.

- `server`: `referee serve`, the bots that log in over TCP and play the league;
- `bridge`: `referee connect`, a local stdio bot relayed to a server;
- `logins`: failed logins counted per address, back-off and the organiser's lines;
- `tls`: TLS contexts, the self-signed certificate, fingerprints and pins;
- `tlsstream`: the TLS 1.3 stream both ends speak over the socket.

May import everything but the command line: `referee.league` and `referee.site`
(the league it serves and its site), and all below them.
"""
