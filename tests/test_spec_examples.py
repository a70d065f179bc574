"""The examples of spec/PROTOCOL.md and spec/LOGS.md are what the referee sends.

`spec/examples.py` plays real games between real bot processes and cuts every
example from what the bots received and sent and from the game logs. Here the
games are played again and the documents compared with them, and every example
the documents show is decoded with the protocol's own types (and the logs').
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import msgspec
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("spec_examples", ROOT / "spec" / "examples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


examples = _load()


def test_every_example_is_what_the_referee_sends_now() -> None:
    made = examples.generate()
    _, drifted = examples.drift(made)
    assert not drifted, (
        f"spec examples no longer what the referee sends: {', '.join(drifted)}; "
        f"refresh them with `{examples.REFRESH}` (python spec/examples.py) and read the diff"
    )
    # Item 1 of issue 14: request ids count one connection's requests, 1, 2, 3.
    by_name = {e.name: e for e in made}
    turns = [p.text for p in by_name["session"].pieces if '"type":"turn"' in p.text]
    assert [msgspec.json.decode(t)["id"] for t in turns] == [1, 2, 3]
    # Item 2: a refused version is `error` code version, then `bye`, and nothing else.
    refused = [msgspec.json.decode(p.text) for p in by_name["refused-version"].pieces]
    assert [(r["type"], r.get("code")) for r in refused] == [("error", "version"), ("bye", None)]


@pytest.mark.parametrize("doc", examples.DOCUMENTS)
def test_every_example_in_the_documents_decodes(doc: str) -> None:
    found = list(examples.document_pieces(doc))
    assert len(found) > 5
    bad = []
    for where, piece in found:
        try:
            examples.decode(piece)
        except examples.ExampleError as exc:
            bad.append(f"{where}: {exc}")
    assert not bad, "\n".join(bad)


def test_an_example_that_is_not_a_message_is_named() -> None:
    text = (
        "Intro.\n\n"
        "  <!-- example: demo -->\n"
        "  ```json\n"
        '  {"type":"turn","id":"one"}\n'
        "  ```\n"
        "  <!-- /example -->\n"
    )
    ((where, piece),) = examples.document_pieces("spec/PROTOCOL.md", text)
    assert where == "spec/PROTOCOL.md: example demo"
    assert piece.kind == "to_bot"
    with pytest.raises(examples.ExampleError, match=r"not a valid to bot line: .*\$\.id"):
        examples.decode(piece)


def test_rewriting_keeps_the_markers_and_their_indent() -> None:
    pong = examples.Example("demo", (examples.Piece("from_bot", '{"type":"pong","nonce":1}'),))
    text = "  <!-- example: demo -->\n  ```json\n  old\n  ```\n  <!-- /example -->\nafter\n"
    new = examples.rewrite(text, {"demo": pong}, "doc")
    assert new == (
        "  <!-- example: demo -->\n  ```json\n"
        '  {"type":"pong","nonce":1}\n'
        "  ```\n  <!-- /example -->\nafter\n"
    )
    assert [p.text for _, p in examples.document_pieces("x.md", new)] == [pong.pieces[0].text]
    with pytest.raises(examples.ExampleError, match="no example is called 'demo'"):
        examples.rewrite(text, {}, "doc")


def test_a_turn_is_spread_over_lines_mechanically() -> None:
    line = (
        '{"type":"turn","id":3,"view":{"hand":[[1,0]],"trains":[{"train":0,"tiles":[]}]},'
        '"legal":[{"action":"pass"}],"clock":{"move_ms":1}}'
    )
    assert examples.readable(line) == (
        "{\n"
        '  "type": "turn",\n'
        '  "id": 3,\n'
        '  "view": {\n'
        '    "hand": [[1,0]],\n'
        '    "trains": [\n'
        '      {"train":0,"tiles":[]}\n'
        "    ]\n"
        "  },\n"
        '  "legal": [\n'
        '    {"action":"pass"}\n'
        "  ],\n"
        '  "clock": {"move_ms":1}\n'
        "}"
    )
    assert msgspec.json.decode(examples.readable(line)) == msgspec.json.decode(line)
