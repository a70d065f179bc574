"""A brute-force login client: COUNT connections at once to HOST:PORT, each sending a
`login` for NAME with a fresh random token, each reading what the server answers
until it closes. Standard library only, threads for the connections. It prints a
JSON list: each connection's answer, every byte the server sent, as text.

    python brute_login.py HOST PORT NAME COUNT
"""

from __future__ import annotations

import json
import secrets
import socket
import sys
import threading

host, port, name, count = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
answers: list[bytes] = []
lock = threading.Lock()


def guess() -> None:
    token = secrets.token_urlsafe(32)
    line = json.dumps({"type": "login", "name": name, "token": token, "protocol": 1})
    data = b""
    try:
        with socket.create_connection((host, port), timeout=30) as sock:
            sock.sendall(line.encode() + b"\n")
            while chunk := sock.recv(65536):
                data += chunk
    except OSError as exc:
        data = f"error {exc}".encode()
    with lock:
        answers.append(data)


threads = [threading.Thread(target=guess) for _ in range(count)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()


print(json.dumps([answer.decode(errors="replace") for answer in answers]))
