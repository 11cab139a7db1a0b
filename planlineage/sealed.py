"""Secret settings sealed at rest in a shared store (the lineage token in PostgreSQL's `settings`).

Every node of a shared store reads the token from the store, so every node needs the key: it is
kept apart from the store, in ``$PLANLINEAGE_HOME/store.key`` (0600, created by the first
``settings set lineage.token`` on a shared store) or in the environment variable
``PLANLINEAGE_STORE_KEY`` (the same base64 text), and copied to every node by the operator.
Whoever can read the store's rows (a backup, a read-only database user, another application of
the database) no longer reads the token; whoever can read a node's key file and the store can.

The scheme uses the standard library only, no cipher of its own design beyond composing two
standard constructions: HMAC-SHA256 as a pseudo-random function in counter mode for the key
stream (nonce of 16 random bytes), then HMAC-SHA256 over version, setting name, nonce and
ciphertext (encrypt-then-MAC), with independent keys derived from the 32-byte key by HMAC. A value
reads ``sealed:v1:<base64url(nonce | ciphertext | tag)>``; a wrong key or an altered value fails
the tag check and is never returned.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
from collections.abc import Mapping
from pathlib import Path

PREFIX = "sealed:v1:"
KEY_FILE = "store.key"
ENV_NAME = "PLANLINEAGE_STORE_KEY"
_NONCE = 16
_TAG = 32


class SealError(ValueError):
    """A sealed value that cannot be opened here (message secret-free, says what to do)."""


def key_path(home: Path) -> Path:
    return home / KEY_FILE


def _decode_key(text: str, where: str) -> bytes:
    try:
        key = base64.urlsafe_b64decode(text.strip().encode("ascii"))
    except (binascii.Error, ValueError, UnicodeEncodeError):
        key = b""
    if len(key) != 32:
        raise SealError(f"{where} is not a store key (32 bytes in base64); copy it again from the node that made it")
    return key


def load_key(home: Path, environ: Mapping[str, str] | None = None) -> bytes | None:
    """The key (environment first, then the home's file); None when neither exists."""
    environ = os.environ if environ is None else environ
    if environ.get(ENV_NAME):
        return _decode_key(environ[ENV_NAME], ENV_NAME)
    path = key_path(home)
    try:
        text = path.read_text(encoding="ascii")
        mode = path.stat().st_mode
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise SealError(f"the store key {path} cannot be read ({type(error).__name__})") from None
    if mode & 0o077:
        _warn_readable(path, mode)
    return _decode_key(text, str(path))


_warned: set[str] = set()


def _warn_readable(path: Path, mode: int) -> None:
    """Said once per process and file: a key others may read opens every sealed setting."""
    if str(path) in _warned:
        return
    _warned.add(str(path))
    from planlineage import lazylog

    lazylog.getLogger("planlineage.emitter").warning(
        "planlineage: the store key %s can be read by other users (mode %s): "
        "whoever reads it and the store reads the lineage token; run `chmod 600 %s`",
        path,
        oct(mode & 0o777),
        path,
    )


def create_key(home: Path) -> bytes:
    """A new random key written to the home's file (0600)."""
    from planlineage import home as homes

    key = os.urandom(32)
    homes.make_private_dir(home)
    homes.write_private(key_path(home), base64.urlsafe_b64encode(key) + b"\n")
    return key


def _subkey(key: bytes, purpose: bytes) -> bytes:
    return hmac.new(key, b"planlineage sealed v1 " + purpose, hashlib.sha256).digest()


def _stream(key: bytes, nonce: bytes, size: int) -> bytes:
    encryption = _subkey(key, b"stream")
    blocks = (size + 31) // 32
    return b"".join(hmac.new(encryption, nonce + i.to_bytes(8, "big"), hashlib.sha256).digest() for i in range(blocks))[
        :size
    ]


def _tag(key: bytes, name: str, nonce: bytes, ciphertext: bytes) -> bytes:
    message = b"v1\0" + name.encode() + b"\0" + nonce + ciphertext
    return hmac.new(_subkey(key, b"tag"), message, hashlib.sha256).digest()


def is_sealed(value: str | None) -> bool:
    return value is not None and value.startswith(PREFIX)


def seal(name: str, value: str, key: bytes) -> str:
    """``value`` of the setting ``name`` sealed with ``key``."""
    plain = value.encode("utf-8")
    nonce = os.urandom(_NONCE)
    ciphertext = bytes(a ^ b for a, b in zip(plain, _stream(key, nonce, len(plain)), strict=True))
    token = nonce + ciphertext + _tag(key, name, nonce, ciphertext)
    return PREFIX + base64.urlsafe_b64encode(token).decode("ascii")


def unseal(name: str, sealed: str, key: bytes) -> str:
    """The value sealed by :func:`seal` for ``name``; :class:`SealError` for any other key or text."""
    try:
        token = base64.urlsafe_b64decode(sealed[len(PREFIX) :].encode("ascii"))
    except (binascii.Error, ValueError, UnicodeEncodeError):
        token = b""
    nonce, ciphertext, tag = token[:_NONCE], token[_NONCE:-_TAG], token[-_TAG:]
    if len(token) < _NONCE + _TAG or not hmac.compare_digest(tag, _tag(key, name, nonce, ciphertext)):
        raise SealError(f"{name} in the shared store was sealed with another store key")
    return bytes(a ^ b for a, b in zip(ciphertext, _stream(key, nonce, len(ciphertext)), strict=True)).decode("utf-8")
