"""Secret settings sealed at rest in a shared store (the lineage token in PostgreSQL's `settings`).

Every node of a shared store reads the token from the store, so every node needs the key: it is
kept apart from the store, in ``$PLANLINEAGE_HOME/store.key`` (0600, created by the first
``settings set lineage.token`` on a shared store) or in the environment variable
``PLANLINEAGE_STORE_KEY`` (the same base64 text), and copied to every node by the operator.
Whoever can read the store's rows (a backup, a read-only database user, another application of
the database) no longer reads the token; whoever can read a node's key file and the store can.

A value is sealed with AES-256-GCM (the ``cryptography`` package, a maintained AEAD; a fresh
12-byte nonce each time) and reads ``sealed:v2:<key id>:<base64url(nonce | ciphertext | tag)>``.
The setting's name and the key id are authenticated with it, so a value moved to another setting
or altered fails the tag check and is never returned. The key id (8 hex digits of a hash of the
key, which tells nothing of the key) says which key sealed a value: a node holding another key is
told so ("sealed with another store key"), and a value whose text was altered or cut is told
apart from it ("damaged": set it again).

Rotation: the key file (or the variable) may hold several keys, one per line (or separated by
blanks), the first one current. A value sealed with a later key is opened with it and is due to be
sealed again with the current one (:func:`needs_reseal`), which the settings do as they read it.

Values sealed by earlier releases (``sealed:v1:``: HMAC-SHA256 in counter mode, then
HMAC-SHA256 over version, name, nonce and ciphertext) are still read, and are due to be sealed
again the same way.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from planlineage.errors import Damaged, SealError, WrongKey

PREFIX = "sealed:v2:"  # what seal() writes
_V1 = "sealed:v1:"
KEY_FILE = "store.key"
ENV_NAME = "PLANLINEAGE_STORE_KEY"
_NONCE = 12  # AES-GCM's standard nonce size
_GCM_TAG = 16
_V1_NONCE = 16
_V1_TAG = 32


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


def _decode_keys(text: str, where: str) -> list[bytes]:
    keys = [_decode_key(part, where) for part in text.split()]
    if not keys:
        raise SealError(f"{where} is not a store key (32 bytes in base64); copy it again from the node that made it")
    return keys


def load_keys(home: Path, environ: Mapping[str, str] | None = None) -> list[bytes]:
    """Every key this node holds, the current one first (environment first, then the home's
    file); empty when neither exists."""
    environ = os.environ if environ is None else environ
    if environ.get(ENV_NAME):
        return _decode_keys(environ[ENV_NAME], ENV_NAME)
    path = key_path(home)
    try:
        text = path.read_text(encoding="ascii")
        mode = path.stat().st_mode
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as error:
        raise SealError(f"the store key {path} cannot be read ({type(error).__name__})") from None
    if mode & 0o077:
        _warn_readable(path, mode)
    return _decode_keys(text, str(path))


def load_key(home: Path, environ: Mapping[str, str] | None = None) -> bytes | None:
    """The current key (the first one held); None when the node holds none."""
    keys = load_keys(home, environ)
    return keys[0] if keys else None


_warned: set[str] = set()


def _warn_readable(path: Path, mode: int) -> None:
    """Said once per process and file: a key others may read opens every sealed setting."""
    if str(path) in _warned:
        return
    _warned.add(str(path))
    from planlineage import lazylog

    lazylog.getLogger(__name__).warning(
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


def key_id(key: bytes) -> str:
    """A short name of a key (8 hex digits of a hash of it) that tells which key sealed a value."""
    return hashlib.sha256(b"planlineage store key id\0" + key).hexdigest()[:8]


def is_sealed(value: str | None) -> bool:
    return value is not None and value.startswith((PREFIX, _V1))


def _keys(keys: bytes | Sequence[bytes]) -> list[bytes]:
    return [keys] if isinstance(keys, bytes) else list(keys)


def _aad(name: str, kid: str) -> bytes:
    return b"planlineage sealed v2\0" + name.encode("utf-8") + b"\0" + kid.encode("ascii")


def _aesgcm():
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:
        raise SealError(
            "sealed settings need the cryptography package, which is not installed: pip install 'planlineage[postgres]'"
        ) from None
    return AESGCM


def seal(name: str, value: str, key: bytes) -> str:
    """``value`` of the setting ``name`` sealed with ``key``."""
    AESGCM = _aesgcm()  # loaded only where a value is sealed
    kid = key_id(key)
    nonce = os.urandom(_NONCE)
    sealed = nonce + AESGCM(key).encrypt(nonce, value.encode("utf-8"), _aad(name, kid))
    return f"{PREFIX}{kid}:{base64.urlsafe_b64encode(sealed).decode('ascii')}"


def _damaged(name: str) -> Damaged:
    return Damaged(
        f"{name} in the shared store is damaged (its sealed text was altered or cut): "
        f"set it again with `planlineage settings set {name} -`"
    )


def _b64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text.encode("ascii"))
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return b""


def unseal(name: str, sealed: str, keys: bytes | Sequence[bytes]) -> str:
    """The value sealed by :func:`seal` for ``name``, opened with whichever of ``keys`` sealed
    it; :class:`WrongKey` when none of them did, :class:`Damaged` when the text was altered."""
    held = _keys(keys)
    if sealed.startswith(_V1):
        return _unseal_v1(name, sealed, held)
    kid, _, body = sealed[len(PREFIX) :].partition(":")
    token = _b64(body)
    if not sealed.startswith(PREFIX) or len(kid) != 8 or len(token) < _NONCE + _GCM_TAG:
        raise _damaged(name)
    key = next((k for k in held if key_id(k) == kid), None)
    if key is None:
        mine = ", ".join(key_id(k) for k in held) or "none"
        raise WrongKey(
            f"{name} in the shared store was sealed with another store key (key id {kid}; this node's: {mine})"
        )
    AESGCM = _aesgcm()  # loaded only where a value is opened
    from cryptography.exceptions import InvalidTag

    try:
        plain = AESGCM(key).decrypt(token[:_NONCE], token[_NONCE:], _aad(name, kid))
    except InvalidTag:
        raise _damaged(name) from None
    return plain.decode("utf-8")


def needs_reseal(sealed: str, keys: bytes | Sequence[bytes]) -> bool:
    """Whether an opened value should be sealed again with the current key: sealed by an earlier
    release (v1), or with a key that is no longer the first one held (a rotation)."""
    held = _keys(keys)
    if not held or not is_sealed(sealed):
        return False
    if sealed.startswith(_V1):
        return True
    return sealed[len(PREFIX) :].partition(":")[0] != key_id(held[0])


# -- values sealed by earlier releases (read only) -------------------------------------------


def _v1_subkey(key: bytes, purpose: bytes) -> bytes:
    return hmac.new(key, b"planlineage sealed v1 " + purpose, hashlib.sha256).digest()


def _v1_stream(key: bytes, nonce: bytes, size: int) -> bytes:
    encryption = _v1_subkey(key, b"stream")
    blocks = (size + 31) // 32
    return b"".join(hmac.new(encryption, nonce + i.to_bytes(8, "big"), hashlib.sha256).digest() for i in range(blocks))[
        :size
    ]


def _v1_tag(key: bytes, name: str, nonce: bytes, ciphertext: bytes) -> bytes:
    message = b"v1\0" + name.encode() + b"\0" + nonce + ciphertext
    return hmac.new(_v1_subkey(key, b"tag"), message, hashlib.sha256).digest()


def _unseal_v1(name: str, sealed: str, keys: list[bytes]) -> str:
    token = _b64(sealed[len(_V1) :])
    if len(token) < _V1_NONCE + _V1_TAG:
        raise _damaged(name)
    nonce, ciphertext, tag = token[:_V1_NONCE], token[_V1_NONCE:-_V1_TAG], token[-_V1_TAG:]
    for key in keys:
        if hmac.compare_digest(tag, _v1_tag(key, name, nonce, ciphertext)):
            stream = _v1_stream(key, nonce, len(ciphertext))
            return bytes(a ^ b for a, b in zip(ciphertext, stream, strict=True)).decode("utf-8")
    # a v1 value names no key: another key and an altered text cannot be told apart
    raise WrongKey(f"{name} in the shared store was sealed with another store key, or its text was altered")
