"""planlineage.sealed on its own (no store): AES-GCM with a key id, values of earlier releases
still read, rotation, and a damaged value told apart from one sealed with another key."""

from __future__ import annotations

import base64

import pytest

from planlineage import sealed

TOKEN = "FAKE-lineage-token-s3cr3t-only"
KEY, OTHER = b"k" * 32, b"w" * 32
#: TOKEN sealed for lineage.token with KEY by the release before v2 (HMAC-CTR + HMAC, `sealed:v1:`)
V1_VALUE = (
    "sealed:v1:G3YgE2jlf6O3Gxi-nkssz2jEhoq5-GhirfGJsGpgGYUmtk5X2GoJOBU_0g0v_OKozQEkJExxjKr0LNC2JSyU9GeYl93qOiAUDFpJ0rOP"
)


def test_a_value_is_sealed_with_aes_gcm_under_a_key_id_and_the_settings_name():
    value = sealed.seal("lineage.token", TOKEN, KEY)
    assert value.startswith(f"sealed:v2:{sealed.key_id(KEY)}:") and TOKEN not in value
    token = base64.urlsafe_b64decode(value.rsplit(":", 1)[1])
    assert len(token) == 12 + len(TOKEN) + 16  # nonce, ciphertext, GCM tag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    aad = b"planlineage sealed v2\0lineage.token\0" + sealed.key_id(KEY).encode()
    assert AESGCM(KEY).decrypt(token[:12], token[12:], aad) == TOKEN.encode()  # the standard AEAD, nothing else
    assert sealed.unseal("lineage.token", value, KEY) == TOKEN
    assert sealed.seal("lineage.token", TOKEN, KEY) != value  # a fresh nonce each time
    assert not sealed.needs_reseal(value, [KEY])


def test_a_damaged_value_is_not_taken_for_another_key():
    value = sealed.seal("lineage.token", TOKEN, KEY)
    body = value.rsplit(":", 1)[1]
    flipped = body[:20] + ("A" if body[20] != "A" else "B") + body[21:]
    for damaged in (value[:-6], value.rsplit(":", 1)[0] + ":" + flipped, "sealed:v2:", "sealed:v2:zz:!!"):
        with pytest.raises(sealed.Damaged, match="damaged.*set it again"):
            sealed.unseal("lineage.token", damaged, KEY)
    with pytest.raises(sealed.Damaged):  # moved to another setting: its name is authenticated
        sealed.unseal("lineage.address", value, KEY)
    with pytest.raises(sealed.WrongKey) as wrong:
        sealed.unseal("lineage.token", value, OTHER)
    assert sealed.key_id(KEY) in str(wrong.value) and sealed.key_id(OTHER) in str(wrong.value)
    assert TOKEN not in str(wrong.value)


def test_a_value_sealed_by_an_earlier_release_is_read_and_due_for_resealing():
    assert sealed.is_sealed(V1_VALUE)
    assert sealed.unseal("lineage.token", V1_VALUE, KEY) == TOKEN
    assert sealed.unseal("lineage.token", V1_VALUE, [OTHER, KEY]) == TOKEN
    assert sealed.needs_reseal(V1_VALUE, [KEY])
    with pytest.raises(sealed.WrongKey):
        sealed.unseal("lineage.token", V1_VALUE, OTHER)
    with pytest.raises(sealed.Damaged):
        sealed.unseal("lineage.token", V1_VALUE[:30], KEY)


def test_rotation_the_first_key_seals_and_later_ones_still_open(tmp_path):
    old_value = sealed.seal("lineage.token", TOKEN, OTHER)
    both = base64.urlsafe_b64encode(KEY).decode() + "\n" + base64.urlsafe_b64encode(OTHER).decode() + "\n"
    sealed.key_path(tmp_path).write_text(both)
    sealed.key_path(tmp_path).chmod(0o600)
    keys = sealed.load_keys(tmp_path, {})
    assert keys == [KEY, OTHER] and sealed.load_key(tmp_path, {}) == KEY
    assert sealed.unseal("lineage.token", old_value, keys) == TOKEN
    assert sealed.needs_reseal(old_value, keys)  # sealed with a key that is no longer the current one
    assert sealed.load_keys(tmp_path, {sealed.ENV_NAME: both.replace("\n", " ")}) == [KEY, OTHER]
    assert sealed.load_keys(tmp_path / "none", {}) == []
