"""The lineage token is sealed at rest in a shared (PostgreSQL) store, with a key kept apart from
it (planlineage.sealed): the store's rows never hold the token, a node with the key reads it, a
node without it says what to do and uses no token."""

from __future__ import annotations

import stat

import pytest
from databases import all_rows

from planlineage import sealed
from planlineage.settings import Settings
from planlineage.store.postgres import PostgresStore

TOKEN = "FAKE-lineage-token-s3cr3t-only"


def test_the_token_is_sealed_in_the_shared_store_and_read_back(pg_url, private_home, tmp_path):
    settings = Settings(PostgresStore(pg_url, private_home), environ={})
    settings.set("lineage.token", TOKEN)
    rows = all_rows(pg_url)
    assert TOKEN not in rows and sealed.PREFIX in rows
    key_file = sealed.key_path(private_home)
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert str(key_file) in settings.problems[0] and "every node" in settings.problems[0]
    assert Settings(PostgresStore(pg_url, private_home), environ={}).get("lineage.token") == TOKEN

    # another node without the key: no token, and what to do
    other_home = tmp_path / "other-node"
    other = Settings(PostgresStore(pg_url, other_home), environ={})
    assert other.get("lineage.token") is None
    assert other.problems and sealed.ENV_NAME in other.problems[0] and TOKEN not in other.problems[0]
    # ... with the key in its environment (or its file copied), it reads the token
    text = key_file.read_text()
    node = Settings(PostgresStore(pg_url, other_home), environ={sealed.ENV_NAME: text})
    assert node.get("lineage.token") == TOKEN and node.problems == []
    # a second `set` reuses the key: the first node still reads the new token
    node.set("lineage.token", TOKEN + "-2")
    assert Settings(PostgresStore(pg_url, private_home), environ={}).get("lineage.token") == TOKEN + "-2"


def test_a_key_of_another_store_or_an_altered_value_is_refused():
    key, wrong = b"k" * 32, b"w" * 32
    value = sealed.seal("lineage.token", TOKEN, key)
    assert TOKEN not in value and sealed.unseal("lineage.token", value, key) == TOKEN
    assert sealed.seal("lineage.token", TOKEN, key) != value  # a fresh nonce each time
    altered = value[:-4] + ("AAAA" if not value.endswith("AAAA") else "BBBB")
    for name, text, secret in (
        ("lineage.token", value, wrong),
        ("lineage.address", value, key),
        ("lineage.token", altered, key),
        ("lineage.token", sealed.PREFIX + "!!", key),
    ):
        with pytest.raises(sealed.SealError):
            sealed.unseal(name, text, secret)


def test_a_damaged_key_says_so(tmp_path):
    sealed.key_path(tmp_path).write_text("not a key\n")
    with pytest.raises(sealed.SealError, match="not a store key"):
        sealed.load_key(tmp_path, {})


def test_the_cli_says_where_the_key_is_and_what_a_node_without_it_must_do(pg_url, tmp_path):
    import os
    import subprocess
    import sys

    def cli(home, *args, stdin=b""):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PLANLINEAGE_")}
        env.update(PLANLINEAGE_HOME=str(home), PLANLINEAGE_STORE=pg_url)
        return subprocess.run(
            [sys.executable, "-P", "-m", "planlineage", "settings", *args],
            input=stdin,
            capture_output=True,
            env=env,
            timeout=60,
        )

    made = cli(tmp_path / "a", "set", "lineage.token", "-", stdin=TOKEN.encode() + b"\n")
    assert made.returncode == 0 and str(tmp_path / "a" / "store.key") in made.stderr.decode()
    missing = cli(tmp_path / "b", "list")
    assert missing.returncode == 0 and "PLANLINEAGE_STORE_KEY" in missing.stderr.decode()
    for result in (made, missing):
        assert TOKEN.encode() not in result.stdout + result.stderr
    assert TOKEN not in all_rows(pg_url)


def test_a_node_without_the_key_does_not_seal_over_another_nodes_token(pg_url, private_home, tmp_path):
    from planlineage.errors import SettingError

    Settings(PostgresStore(pg_url, private_home), environ={}).set("lineage.token", TOKEN)
    other_home = tmp_path / "other-node"
    other = Settings(PostgresStore(pg_url, other_home), environ={})
    with pytest.raises(SettingError) as refused:
        other.set("lineage.token", TOKEN + "-2")
    message = str(refused.value)
    assert "store.key" in message and sealed.ENV_NAME in message and TOKEN not in message
    assert not sealed.key_path(other_home).exists()  # no second key made
    # every node with the key still reads the token
    assert Settings(PostgresStore(pg_url, private_home), environ={}).get("lineage.token") == TOKEN
    # with the key copied, the same `set` goes through and the first node reads it
    key = sealed.key_path(private_home).read_text()
    Settings(PostgresStore(pg_url, other_home), environ={sealed.ENV_NAME: key}).set("lineage.token", TOKEN + "-2")
    assert Settings(PostgresStore(pg_url, private_home), environ={}).get("lineage.token") == TOKEN + "-2"
    # after an unset (no sealed value left), a node may start over with a new key
    other.unset("lineage.token")
    other.set("lineage.token", TOKEN + "-3")
    assert sealed.key_path(other_home).exists() and other.get("lineage.token") == TOKEN + "-3"


def test_a_setting_that_is_no_secret_is_never_unsealed(pg_url, private_home, tmp_path):
    """A non-secret shared value that happens to start with the seal prefix is taken as it
    stands: no key asked for, no problem said, the value not dropped."""
    value = sealed.PREFIX + "not-sealed"
    Settings(PostgresStore(pg_url, private_home), environ={}).set("lineage.namespace", value)
    node = Settings(PostgresStore(pg_url, tmp_path / "other-node"), environ={})
    assert node.get("lineage.namespace") == value and node.problems == []


def test_a_key_file_others_may_read_is_warned_about(tmp_path, caplog):
    import logging

    sealed.create_key(tmp_path)
    path = sealed.key_path(tmp_path)
    with caplog.at_level(logging.WARNING):
        sealed.load_key(tmp_path, {})
    assert not [r for r in caplog.records if "store key" in r.getMessage()]
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING):
        assert sealed.load_key(tmp_path, {}) is not None
    said = [r.getMessage() for r in caplog.records if "store key" in r.getMessage()]
    assert len(said) == 1 and "chmod 600" in said[0] and "0o644" in said[0]


def _stored(pg_url, private_home) -> str:
    store = PostgresStore(pg_url, private_home)
    try:
        return store.read(lambda c: c.execute("SELECT value FROM settings WHERE key = 'lineage.token'").fetchone()[0])
    finally:
        store.close()


def _put(pg_url, private_home, value: str) -> None:
    store = PostgresStore(pg_url, private_home)
    try:
        store.write(lambda c: c.execute("UPDATE settings SET value = ? WHERE key = 'lineage.token'", (value,)))
    finally:
        store.close()


def test_a_token_sealed_by_an_earlier_release_is_read_then_sealed_again_with_aes_gcm(pg_url, private_home):
    import base64

    # TOKEN sealed for lineage.token with KEY by the release before v2 (tests/store/test_sealing.py)
    KEY = b"k" * 32
    V1_VALUE = "sealed:v1:G3YgE2jlf6O3Gxi-nkssz2jEhoq5-GhirfGJsGpgGYUmtk5X2GoJOBU_0g0v_OKozQEkJExxjKr0LNC2JSyU9GeYl93qOiAUDFpJ0rOP"
    Settings(PostgresStore(pg_url, private_home), environ={}).set("lineage.token", "placeholder")
    environ = {sealed.ENV_NAME: base64.urlsafe_b64encode(KEY).decode()}
    _put(pg_url, private_home, V1_VALUE)
    assert Settings(PostgresStore(pg_url, private_home), environ=environ).get("lineage.token") == TOKEN
    now = _stored(pg_url, private_home)
    assert now.startswith(f"sealed:v2:{sealed.key_id(KEY)}:") and TOKEN not in now
    assert Settings(PostgresStore(pg_url, private_home), environ=environ).get("lineage.token") == TOKEN


def test_a_rotated_key_reseals_what_the_old_one_sealed(pg_url, private_home):
    import base64

    old, new = b"o" * 32, b"n" * 32
    text = base64.urlsafe_b64encode
    Settings(PostgresStore(pg_url, private_home), environ={sealed.ENV_NAME: text(old).decode()}).set(
        "lineage.token", TOKEN
    )
    assert _stored(pg_url, private_home).startswith(f"sealed:v2:{sealed.key_id(old)}:")
    rotated = {sealed.ENV_NAME: f"{text(new).decode()} {text(old).decode()}"}  # the new key first, the old kept
    assert Settings(PostgresStore(pg_url, private_home), environ=rotated).get("lineage.token") == TOKEN
    assert _stored(pg_url, private_home).startswith(f"sealed:v2:{sealed.key_id(new)}:")
    only_new = {sealed.ENV_NAME: text(new).decode()}  # the old key can go once every value is resealed
    assert Settings(PostgresStore(pg_url, private_home), environ=only_new).get("lineage.token") == TOKEN


def test_a_damaged_token_says_to_set_it_again_not_to_copy_a_key(pg_url, private_home):
    Settings(PostgresStore(pg_url, private_home), environ={}).set("lineage.token", TOKEN)
    value = _stored(pg_url, private_home)
    _put(pg_url, private_home, value[:-8])
    node = Settings(PostgresStore(pg_url, private_home), environ={})
    assert node.get("lineage.token") is None
    (problem,) = node.problems
    assert "damaged" in problem and "settings set lineage.token" in problem and "copy" not in problem
