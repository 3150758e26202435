"""Checkpoint encryption in MindSpore's byte layout (``enc_key`` / ``dec_key``).

An encrypted ``.ckpt`` is the plain checkpoint (the concatenated protobuf messages) cut into
blocks of at most :data:`BLOCK_SIZE` bytes, each encrypted on its own with a fresh random
16-byte IV and written as (all integers int32 little-endian)::

    magic                      0x7F3A5ED8 AES-GCM, 0x7F3A5ED9 AES-CBC, 0x7F3A5EDA SM4-CBC
    tag (16 bytes)             AES-GCM only: the authentication tag
    length                     4 + 16 + 4 + cipher_len
    iv_len                     16
    iv (16 bytes)              AES-GCM uses its first 12 bytes as the nonce, no associated data
    cipher_len
    cipher                     CBC modes: PKCS#7 padded

The key is used as it is (16, 24 or 32 bytes for AES, 16 for SM4). This is the layout
MindSpore 2.10 writes and reads (checked against it: ``tests/data/make_crypto_fixtures.py``).
The ciphers come from the ``cryptography`` package (``pip install mscore[crypto]``).

Integrity. AES-GCM authenticates each block on its own, but not which file or position a
block belongs to (MindSpore uses no associated data), and the CBC modes authenticate nothing:
a flipped bit decrypts to wrong weights. So mscore adds, within the same layout:

* a **marker** in every IV: its last 4 bytes are the first 4 bytes of
  ``HMAC-SHA256(mac_key, b"iv" + iv[:12])`` (the first 12 bytes stay random; GCM uses only
  those as its nonce), which tells, before anything is parsed, that the file carries
* a **MAC trailer** at the end of the plain bytes: one protobuf field (number
  :data:`_TRAILER_FIELD`, unknown to the checkpoint schema, so MindSpore's parser skips it)
  holding ``b"mscore-hmac-sha256:"`` and ``HMAC-SHA256(mac_key, every plain byte before
  it)``.

``mac_key = HMAC-SHA256(key, b"mscore checkpoint integrity v1 " + mode)``. A file whose
blocks are marked must end with a valid trailer, and every block must be marked: a flipped
bit, a block spliced in from another checkpoint of the same key, blocks reordered or dropped
are refused in every mode. Files without markers (written by MindSpore or an older mscore)
still load: AES-GCM ones are authenticated block by block; CBC ones with a warning that they
carry no integrity check, and ``crc_check=True`` refuses them.

A wrong key is refused in every mode with :data:`WRONG_KEY`: AES-GCM by its tag; CBC by its
padding, or, when the pseudo-random bytes a wrong key decrypts to end in valid-looking padding
(about one block in 256), because its IVs are then unmarked and the bytes are no checkpoint
(the loader refuses unauthenticated bytes that do not parse with the same message).
"""
from __future__ import annotations

import hashlib
import hmac
import os
import struct
import warnings

from mscore.common.protobuf_wire import field_head

#: Plaintext bytes per encrypted block (MindSpore: 64 MiB).
BLOCK_SIZE = 64 * 1024 * 1024
MAGIC = {"AES-GCM": 0x7F3A5ED8, "AES-CBC": 0x7F3A5ED9, "SM4-CBC": 0x7F3A5EDA}
MODES = tuple(MAGIC)
_MODE_OF_MAGIC = {v: k for k, v in MAGIC.items()}
_KEY_LENGTHS = {"AES-GCM": (16, 24, 32), "AES-CBC": (16, 24, 32), "SM4-CBC": (16,)}
_IV_LEN = 16
_TAG_LEN = 16
_NONCE_LEN = 12
_INT = struct.Struct("<i")
_UINT = struct.Struct("<I")
_RANDOM_IV_LEN = 12
_MARKER_LEN = _IV_LEN - _RANDOM_IV_LEN
#: protobuf field number of the MAC trailer (outside the checkpoint schema and below the
#: range 19000-19999 that protobuf reserves)
_TRAILER_FIELD = 4093
_TRAILER_LABEL = b"mscore-hmac-sha256:"
_MAC_LEN = 32


#: why a file is refused when a block does not decrypt, or (CBC without integrity check) its
#: plain bytes are not a checkpoint: a wrong key decrypts CBC to pseudo-random bytes whose
#: PKCS#7 padding still looks valid about once in 256 blocks
WRONG_KEY = "decryption failed: the dec_key is wrong or the file was tampered with"

_TRAILER_HEAD = field_head(_TRAILER_FIELD, len(_TRAILER_LABEL) + _MAC_LEN) + _TRAILER_LABEL
TRAILER_LEN = len(_TRAILER_HEAD) + _MAC_LEN


def _mac_key(key, mode):
    return hmac.new(key, b"mscore checkpoint integrity v1 " + mode.encode(),
                    hashlib.sha256).digest()


def _iv_marker(mac_key, random_part):
    return hmac.new(mac_key, b"iv" + bytes(random_part), hashlib.sha256).digest()[:_MARKER_LEN]


def _marked_iv(mac_key):
    random_part = os.urandom(_RANDOM_IV_LEN)
    return random_part + _iv_marker(mac_key, random_part)


def _is_marked(mac_key, iv):
    return hmac.compare_digest(_iv_marker(mac_key, iv[:_RANDOM_IV_LEN]), bytes(iv[_RANDOM_IV_LEN:]))


def check_key(key, name, func):
    """``key`` when it is bytes (or None); MindSpore's ``ValueError`` otherwise."""
    if key is not None and not isinstance(key, bytes):
        raise ValueError(f"For '{func}', the argument '{name}' must be bytes or None, but got "
                         f"{type(key).__name__}.")
    return key


def check_mode(mode, name, func):
    """``mode`` when it is a str; MindSpore's ``ValueError`` otherwise."""
    if not isinstance(mode, str):
        raise ValueError(f"For '{func}', the argument '{name}' must be str, but got "
                         f"{type(mode).__name__}.")
    return mode


def check_key_and_mode(key, mode, key_name, mode_name, func):
    """For a key that is given: ``mode`` is one of :data:`MODES` and the key length suits it
    (``ValueError`` naming the argument, before any file is touched)."""
    if mode not in MAGIC:
        raise ValueError(f"For '{func}', the argument '{mode_name}' must be one of "
                         f"{list(MODES)}, but got {mode!r}.")
    lengths = _KEY_LENGTHS[mode]
    if len(key) not in lengths:
        raise ValueError(f"For '{func}', the argument '{key_name}' must be "
                         f"{' or '.join(map(str, lengths))} bytes long for {mode}, but got "
                         f"{len(key)} bytes.")


def _backend():
    try:
        from cryptography.hazmat.primitives import padding
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError as exc:
        raise ImportError("encrypted checkpoints need the 'cryptography' package: "
                          "pip install cryptography (or mscore[crypto])") from exc
    return padding, Cipher, algorithms, modes, AESGCM


def _cbc_cipher(mode, key, iv):
    _, cipher_cls, algorithms, modes, _ = _backend()
    algorithm = algorithms.AES(key) if mode == "AES-CBC" else algorithms.SM4(key)
    return cipher_cls(algorithm, modes.CBC(iv))


def encrypt_block(plain, key, mode, iv=None):
    """One encrypted block (magic, tag, length, iv, cipher) of ``plain`` (``iv``: a fresh
    random one when not given)."""
    padding, _, _, _, aesgcm = _backend()
    iv = os.urandom(_IV_LEN) if iv is None else iv
    if mode == "AES-GCM":
        sealed = aesgcm(key).encrypt(iv[:_NONCE_LEN], bytes(plain), None)
        cipher, tag = sealed[:-_TAG_LEN], sealed[-_TAG_LEN:]
    else:
        padder = padding.PKCS7(128).padder()
        padded = padder.update(bytes(plain)) + padder.finalize()
        enc = _cbc_cipher(mode, key, iv).encryptor()
        cipher, tag = enc.update(padded) + enc.finalize(), b""
    body = _INT.pack(_IV_LEN) + iv + _INT.pack(len(cipher)) + cipher
    return _UINT.pack(MAGIC[mode]) + tag + _INT.pack(len(body)) + body


class EncryptingWriter:
    """A file-like sink: bytes written to it are encrypted in blocks of :data:`BLOCK_SIZE`
    (marked IVs) and passed to ``out.write``; :meth:`close` appends the MAC trailer and
    encrypts the last, shorter block."""

    def __init__(self, out, key, mode):
        self._out, self._key, self._mode = out, key, mode
        self._mac_key = _mac_key(key, mode)
        self._mac = hmac.new(self._mac_key, digestmod=hashlib.sha256)
        self._buffer = bytearray()

    def _flush(self, size):
        self._out.write(encrypt_block(self._buffer[:size], self._key, self._mode,
                                      _marked_iv(self._mac_key)))
        del self._buffer[:size]

    def write(self, data):
        self._mac.update(data)
        self._buffer += data
        while len(self._buffer) >= BLOCK_SIZE:
            self._flush(BLOCK_SIZE)
        return len(data)

    def close(self):
        self._buffer += _TRAILER_HEAD + self._mac.digest()
        while self._buffer:
            self._flush(min(BLOCK_SIZE, len(self._buffer)))


def cipher_mode(data):
    """The mode a file of bytes ``data`` is encrypted with (from its first magic), or None
    for a file that is not encrypted."""
    if len(data) < 4:
        return None
    return _MODE_OF_MAGIC.get(_UINT.unpack_from(data, 0)[0])


def decrypt(data, key, mode, bad, require_mac=False, warn_unchecked=warnings.warn):
    """The plain bytes of the encrypted ``data`` (without mscore's MAC trailer). ``bad(why)``
    builds the exception raised for a file that is not encrypted with ``mode``, is damaged or
    tampered with, or was encrypted with another key; ``require_mac`` refuses a file without
    mscore's integrity check, ``warn_unchecked(why)`` is told of a CBC file without one: its
    plain bytes are unauthenticated, and a wrong key yields valid-looking padding about once
    in 256 blocks, so the caller must refuse them with :data:`WRONG_KEY` when they do not
    parse."""
    padding, _, _, _, aesgcm = _backend()
    from cryptography.exceptions import InvalidTag
    view = memoryview(data)
    found = cipher_mode(view)
    if found is None:
        raise bad("it is not an encrypted checkpoint (no MindSpore cipher header); load it "
                  "without dec_key")
    if found != mode:
        raise bad(f"it is encrypted with {found}, not {mode}; pass dec_mode={found!r}")
    mac_key = _mac_key(key, mode)
    out, marks, pos, end = bytearray(), [], 0, len(view)
    head = 4 + (_TAG_LEN if mode == "AES-GCM" else 0) + 4
    while pos < end:
        if end - pos < head:
            raise bad(f"the encrypted block at byte {pos} is truncated")
        magic = _UINT.unpack_from(view, pos)[0]
        if magic != MAGIC[mode]:
            raise bad(f"the encrypted block at byte {pos} has no {mode} header (the file is "
                      f"damaged or has trailing data)")
        tag = bytes(view[pos + 4:pos + 4 + _TAG_LEN]) if mode == "AES-GCM" else None
        length = _INT.unpack_from(view, pos + head - 4)[0]
        body_start = pos + head
        if length < 8 + _IV_LEN or body_start + length > end:
            raise bad(f"the encrypted block at byte {pos} is truncated or its length field "
                      f"is damaged")
        iv_len = _INT.unpack_from(view, body_start)[0]
        cipher_len = _INT.unpack_from(view, body_start + 4 + _IV_LEN)[0] \
            if iv_len == _IV_LEN else -1
        if iv_len != _IV_LEN or cipher_len != length - 8 - _IV_LEN:
            raise bad(f"the encrypted block at byte {pos} has inconsistent lengths")
        iv = view[body_start + 4:body_start + 4 + _IV_LEN]
        marks.append(_is_marked(mac_key, iv))
        cipher = view[body_start + 8 + _IV_LEN:body_start + length]
        try:
            if mode == "AES-GCM":
                out += aesgcm(key).decrypt(bytes(iv[:_NONCE_LEN]), bytes(cipher) + tag, None)
            else:
                dec = _cbc_cipher(mode, key, bytes(iv)).decryptor()
                padded = dec.update(bytes(cipher)) + dec.finalize()
                unpadder = padding.PKCS7(128).unpadder()
                out += unpadder.update(padded) + unpadder.finalize()
        except (InvalidTag, ValueError):
            raise bad(WRONG_KEY) from None
        pos = body_start + length
    return _verified(bytes(out), mac_key, mode, marks, require_mac, bad, warn_unchecked)


def _verified(plain, mac_key, mode, marks, require_mac, bad, warn_unchecked):
    """``plain`` without its MAC trailer, once the trailer is checked (module docstring). A
    file with a marked block or a trailer is held to both: a damaged marker or trailer is
    refused, never taken for a file without integrity check."""
    has_trailer = plain[-TRAILER_LEN:-_MAC_LEN] == _TRAILER_HEAD
    if any(marks) or has_trailer:
        if not all(marks):
            raise bad("the integrity markers of its encrypted blocks are damaged or some "
                      "blocks were taken from another file")
        if not has_trailer:
            raise bad("its integrity check is missing (the file was truncated or tampered "
                      "with)")
        body = plain[:-TRAILER_LEN]
        expected = hmac.new(mac_key, body, hashlib.sha256).digest()
        if not hmac.compare_digest(expected, plain[-_MAC_LEN:]):
            raise bad("its integrity check failed: the file was tampered with or damaged "
                      "(blocks changed, reordered, dropped or taken from another file)")
        return body
    if require_mac:
        raise bad("crc_check=True but the file carries no integrity check (it was written "
                  "by MindSpore or an older mscore)")
    if mode != "AES-GCM":
        warn_unchecked(f"it carries no integrity check ({mode} authenticates nothing; written "
                       f"by MindSpore or an older mscore): a damaged file may load wrong "
                       f"values")
    return plain
