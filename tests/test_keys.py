"""The organiser's keys and signatures (`referee.proof.keys`, `referee keygen`): round
trips, and minisign's own binary on both sides, when it is installed."""

from __future__ import annotations

import base64
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli import main
from referee.proof import keys as k
from referee.proof.keys import ProofError, PublicKey, SigningKey

MINISIGN = shutil.which("minisign")
needs_minisign = pytest.mark.skipif(
    MINISIGN is None, reason="minisign is not installed (Debian: apt-get install minisign)"
)
COMMENT = "results of league demo\tgames:12\tdigest:ab12 — fin"


def minisign(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert MINISIGN is not None
    return subprocess.run(
        [MINISIGN, *map(str, args)],
        cwd=cwd,
        stdin=subprocess.DEVNULL,  # it must ask for no password
        capture_output=True,
        text=True,
        timeout=30,
    )


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def signed_file(tmp_path: Path, size: int = 5000) -> Path:
    path = tmp_path / "results.json"
    path.write_bytes(bytes(range(256)) * (size // 256) + b"\n")
    return path


def test_keygen_writes_a_pair_that_loads_back(tmp_path: Path) -> None:
    key = k.keygen(tmp_path / "organiser")
    secret, public = tmp_path / "organiser", tmp_path / "organiser.pub"
    assert (mode(secret), mode(public)) == (0o600, 0o644)
    loaded = SigningKey.load(secret)
    assert loaded.key_id == key.key_id and loaded.public == key.public
    assert PublicKey.load(public) == key.public
    assert PublicKey.from_text(key.public.line()) == key.public
    assert PublicKey.from_text(public.read_text()) == key.public
    assert public.read_text() == key.public.text()
    assert public.read_text().splitlines()[0] == (
        f"untrusted comment: minisign public key {key.public.id_hex}"
    )
    assert key.public.line().startswith("RW")  # b"Ed", as every minisign key
    assert SigningKey.from_text(secret.read_text()).public == key.public
    assert key.key_id.hex() not in repr(key) and key.public.id_hex in repr(key)


def test_raw_signatures_verify_and_refuse() -> None:
    key, other = SigningKey.generate(), SigningKey.generate()
    record = b'{"game":"g-0001","seat":2,"rank":1,"log":"' + b"ab" * 128 + b'"}'
    signature = key.sign(record)
    assert len(signature) == 64
    assert key.public.verify(record, signature)
    assert not key.public.verify(record + b" ", signature)
    assert not other.public.verify(record, signature)
    assert not key.public.verify(record, signature[:-1])
    assert not key.public.verify(record, b"")


def test_a_minisig_round_trips_with_its_trusted_comment() -> None:
    key = SigningKey.generate()
    data = b"x" * 1000
    text = key.minisig(data, COMMENT)
    lines = text.splitlines()
    assert lines[0] == "untrusted comment: signature from referee"
    assert lines[2] == f"trusted comment: {COMMENT}"
    assert base64.b64decode(lines[1])[:10] == b"ED" + key.key_id
    assert key.public.verify_minisig(data, text) == COMMENT
    assert key.public.verify_minisig(data, text.replace("\n", "\r\n")) == COMMENT
    for bad in ("two\nlines", "a\rb", "bell\x07", "x" * 9000):
        with pytest.raises(ValueError, match="trusted comment"):
            key.minisig(data, bad)
    with pytest.raises(ValueError, match="untrusted comment"):
        key.minisig(data, "ok", untrusted_comment="two\nlines")


def refusal(key: PublicKey, data: bytes, text: str) -> ProofError:
    with pytest.raises(ProofError) as caught:
        key.verify_minisig(data, text, "results.json.minisig")
    assert str(caught.value).startswith("results.json.minisig: ")
    assert "\n" not in str(caught.value)
    return caught.value


def test_a_changed_file_comment_or_key_is_refused_with_the_check_that_failed() -> None:
    key, other = SigningKey.generate(), SigningKey.generate()
    data = b'{"standings": []}\n'
    text = key.minisig(data, COMMENT)
    lines = text.splitlines(keepends=True)

    changed = refusal(key.public, data.replace(b"[]", b"[1]"), text)
    assert changed.check == k.SIGNATURE and "file was changed" in str(changed)

    lines_tc = [*lines[:2], "trusted comment: results of another league\n", lines[3]]
    comment = refusal(key.public, data, "".join(lines_tc))
    assert comment.check == k.GLOBAL and "trusted comment was changed" in str(comment)

    wrong = refusal(other.public, data, text)
    assert wrong.check == k.KEY_ID
    assert key.public.id_hex in str(wrong) and other.public.id_hex in str(wrong)

    # Another key under the same key id: the key id check passes, the signature does not.
    impostor = SigningKey(key.key_id, os.urandom(32))
    assert refusal(impostor.public, data, text).check == k.SIGNATURE

    # The trusted comment's own signature made by another key.
    forged = other.minisig(data, COMMENT).splitlines(keepends=True)[3]
    assert refusal(key.public, data, "".join([*lines[:3], forged])).check == k.GLOBAL

    other_alg = base64.b64encode(b"EX" + base64.b64decode(lines[1])[2:]).decode() + "\n"
    for broken in ("", "hello\n", "".join(lines[:3]), "".join([lines[0], other_alg, *lines[2:]])):
        assert refusal(key.public, data, broken).check == k.FORMAT
    assert refusal(key.public, data, text.replace("trusted", "trusty")).check == k.FORMAT


def test_write_minisig_puts_the_signature_beside_the_file(tmp_path: Path) -> None:
    key = k.keygen(tmp_path / "organiser")
    path = signed_file(tmp_path)
    assert k.write_minisig(path, key, "first") == tmp_path / "results.json.minisig"
    assert k.write_minisig(path, key, COMMENT) == tmp_path / "results.json.minisig"
    assert mode(tmp_path / "results.json.minisig") == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "organiser",
        "organiser.pub",
        "results.json",
        "results.json.minisig",
    ]
    assert k.verify_minisig_file(path, key.public) == COMMENT
    path.write_bytes(path.read_bytes() + b" ")
    with pytest.raises(ProofError, match=r"results\.json\.minisig: the signature") as caught:
        k.verify_minisig_file(path, key.public)
    assert caught.value.check == k.SIGNATURE
    with pytest.raises(ProofError, match=r"missing\.json: cannot read") as gone:
        k.write_minisig(tmp_path / "missing.json", key, COMMENT)
    assert gone.value.check == k.FILE


@needs_minisign
def test_minisign_verifies_our_signature(tmp_path: Path) -> None:
    key = k.keygen(tmp_path / "organiser")
    path = signed_file(tmp_path)
    k.write_minisig(path, key, COMMENT)
    done = minisign("-Vm", "results.json", "-p", "organiser.pub", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"Trusted comment: {COMMENT}" in done.stdout
    inline = minisign("-Vm", "results.json", "-P", key.public.line(), cwd=tmp_path)
    assert inline.returncode == 0, inline.stderr
    path.write_bytes(path.read_bytes()[:-1])
    refused = minisign("-Vm", "results.json", "-p", "organiser.pub", cwd=tmp_path)
    assert refused.returncode == 1 and "Signature verification failed" in refused.stderr


@needs_minisign
@pytest.mark.parametrize("legacy", [False, True], ids=["prehashed", "legacy"])
def test_minisign_signs_with_our_secret_key(tmp_path: Path, legacy: bool) -> None:
    key = k.keygen(tmp_path / "organiser")
    path = signed_file(tmp_path)
    args = ["-S", "-s", "organiser", "-m", "results.json", "-t", COMMENT]
    done = minisign(*args, *(["-l"] if legacy else []), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert k.verify_minisig_file(path, key.public) == COMMENT
    # minisign, given the public key too, checks that the two halves belong together.
    paired = minisign(*args, "-p", "organiser.pub", cwd=tmp_path)
    assert paired.returncode == 0, paired.stderr


@needs_minisign
def test_a_key_pair_of_minisign_is_ours_too(tmp_path: Path) -> None:
    made = minisign("-G", "-W", "-p", "theirs.pub", "-s", "theirs.key", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    key = SigningKey.load(tmp_path / "theirs.key")
    assert key.public == PublicKey.load(tmp_path / "theirs.pub")
    path = signed_file(tmp_path)
    k.write_minisig(path, key, COMMENT)
    done = minisign("-Vm", "results.json", "-p", "theirs.pub", "-Q", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, COMMENT + "\n"), done.stderr


def secret_with(tmp_path: Path, at: int, new: bytes | None) -> Path:
    """A secret key file whose bytes from `at` are replaced by `new`, or with None
    whose byte at `at` has every bit flipped (a fresh key's byte may already be any
    given value)."""
    lines = SigningKey.generate().text().splitlines()
    data = bytearray(base64.b64decode(lines[1]))
    if new is None:
        new = bytes([data[at] ^ 0xFF])
    data[at : at + len(new)] = new
    path = tmp_path / "edited.key"
    path.write_text(f"{lines[0]}\n{base64.b64encode(bytes(data)).decode()}\n")
    path.chmod(0o600)
    return path


def load_refused(path: Path) -> ProofError:
    with pytest.raises(ProofError) as caught:
        SigningKey.load(path)
    assert str(caught.value).startswith(f"{path}: ") and "\n" not in str(caught.value)
    return caught.value


def test_a_secret_key_others_may_open_encrypted_or_damaged_is_refused(tmp_path: Path) -> None:
    k.keygen(tmp_path / "organiser")
    (tmp_path / "organiser").chmod(0o644)
    opened = load_refused(tmp_path / "organiser")
    assert opened.check == k.MODE and "mode 0644" in str(opened) and "chmod 600" in str(opened)
    (tmp_path / "organiser").chmod(0o620)
    assert load_refused(tmp_path / "organiser").check == k.MODE

    encrypted = load_refused(secret_with(tmp_path, 2, b"Sc"))
    assert encrypted.check == k.ENCRYPTED
    assert "`referee keygen` or `minisign -G -W`" in str(encrypted)

    assert "checksum" in str(load_refused(secret_with(tmp_path, 126, None)))
    # A changed public half, with the zero checksum of `minisign -G -W`.
    assert "public half" in str(load_refused(secret_with(tmp_path, 94, bytes(64))))
    assert load_refused(secret_with(tmp_path, 0, b"EX")).check == k.FORMAT

    (tmp_path / "organiser.pub").chmod(0o600)  # a public key in place of the secret one
    assert load_refused(tmp_path / "organiser.pub").check == k.FORMAT
    assert load_refused(tmp_path / "absent").check == k.FILE


def test_keygen_refuses_to_overwrite_and_leaves_both_files(tmp_path: Path) -> None:
    k.keygen(tmp_path / "organiser")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(ProofError, match=r"organiser: already exists"):
        k.keygen(tmp_path / "organiser")
    (tmp_path / "organiser").rename(tmp_path / "moved")
    with pytest.raises(ProofError, match=r"organiser\.pub: already exists"):
        k.keygen(tmp_path / "organiser")
    assert not (tmp_path / "organiser").exists()
    (tmp_path / "moved").rename(tmp_path / "organiser")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def keygen_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["keygen", *args])
    return result.exit_code, result.stdout, result.stderr


def test_referee_keygen_prints_the_public_key_and_refuses_to_overwrite(tmp_path: Path) -> None:
    status, out, err = keygen_cli(str(tmp_path / "organiser"))
    assert (status, err) == (0, "")
    key = SigningKey.load(tmp_path / "organiser")
    lines = out.splitlines()
    assert lines[0].startswith(f"secret key: {tmp_path / 'organiser'} (mode 0600): keep it")
    assert lines[1].startswith(f"public key: {tmp_path / 'organiser.pub'} (key id ")
    assert lines[2] == key.public.line()
    assert lines[3].endswith(f"minisign -Vm FILE -p {tmp_path / 'organiser.pub'}")

    status, out, err = keygen_cli(str(tmp_path / "organiser"))
    assert (status, out) == (2, "")
    assert err == (
        f"referee: error: {tmp_path / 'organiser'}: already exists; a key is never "
        "overwritten (choose another name, or move the old key away)\n"
    )
    assert SigningKey.load(tmp_path / "organiser").public == key.public

    (tmp_path / "a-file").write_text("")
    status, out, err = keygen_cli(str(tmp_path / "a-file" / "organiser"))
    assert (status, out) == (2, "")
    assert err == (
        f"referee: error: {tmp_path / 'a-file' / 'organiser'}: cannot write: no folder "
        f"{tmp_path / 'a-file'}\n"
    )
