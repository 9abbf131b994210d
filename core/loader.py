"""Loading a SentencePiece model file into a Model, with clear errors for bad files."""

from __future__ import annotations

import importlib
import logging
import os
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

import sentencepiece as spm
from librt.vecs import vec
from mypy_extensions import i32, u8

from tokenline.core.charsmap import Charsmap, CharsmapError
from tokenline.core.model import Model
from tokenline.core.modelfile import ModelError, display_name, read_model_file, short_error
from tokenline.core.normalizer import NormRules
from tokenline.core.segments import Segmenter
from tokenline.core.spfamily import SentencePieceFamily
from tokenline.core.spsegments import WhitespaceSegmenter
from tokenline.core.usermatch import UserMatcher
from tokenline.core.vocab import (
    FLAG_BYTE,
    FLAG_CONTINUATION,
    FLAG_SPECIAL,
    FLAG_UNKNOWN,
    FLAG_WHITESPACE,
    LENGTH_IN_CONTEXT,
    Vocabulary,
    byte_piece_value,
)

log = logging.getLogger("tokenline.core")

BUNDLED_DEFAULT = "mistral-7b-v0.1"

# ModelProto.SentencePiece.Type
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, BYTE, UNUSED = 1, 2, 3, 4, 6, 5
MODEL_TYPES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}


def bundled_models() -> dict[str, Path]:
    """Names and paths of the models shipped inside the package."""
    root = resources.files("tokenline.core.models")
    out: dict[str, Path] = {}
    for entry in root.iterdir():
        if entry.name.endswith(".model"):
            out[entry.name[: -len(".model")]] = Path(str(entry))
    return out


def bundled_model_path(name: str = BUNDLED_DEFAULT) -> Path:
    models = bundled_models()
    if name not in models:
        raise ModelError(name, f"no bundled model of that name (bundled: {', '.join(models)})")
    return models[name]


def load_model_file(path: str | os.PathLike[str] | None = None) -> Model:
    """Loads a SentencePiece .model file (the bundled Mistral tokenizer when path is None).

    tokenline.core.load_model (core/resolve.py) also takes bundled names and Hub repo ids."""
    if path is None:
        path = bundled_model_path()
    p = os.fspath(path)
    return load_model_bytes(read_model_file(p, "a .model file"), p)


def _model_pb2() -> Any:
    # Generated protobuf code has no type information.
    return importlib.import_module("sentencepiece.sentencepiece_model_pb2")


def load_model_bytes(data: bytes, path: str = "<bytes>") -> Model:
    pb = _model_pb2()

    if not data:
        raise ModelError(path, "the file is empty")
    proto = pb.ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception:
        raise ModelError(path, "not a SentencePiece model (the protobuf does not parse)") from None
    if len(proto.pieces) == 0:
        raise ModelError(path, "not a SentencePiece model (it has no pieces)")
    full = spm.SentencePieceProcessor()
    try:
        full.LoadFromSerializedProto(data)
    except Exception as exc:
        raise ModelError(path, f"SentencePiece rejects it: {short_error(exc)}") from None

    model_type = MODEL_TYPES.get(proto.trainer_spec.model_type, "unknown")
    # Each piece's text and type, read out of the protobuf once: every check below walks all of
    # them, and a protobuf field read costs several times a list's (a fifth of a model's load).
    # Two lists, not a list of pairs: 32,000 small tuples freed among the texts the vocabulary
    # keeps would leave the heap fragmented (1.7 MB more resident in the server).
    pieces = Pieces([p.piece for p in proto.pieces], [p.type for p in proto.pieces])
    vocab, user_pieces = _vocabulary(proto, pieces, full)
    family = SentencePieceFamily(vocab, _norm_rules(proto, path, user_pieces))
    if any(len(p) > 1 for p in user_pieces):
        family.use_matcher(UserMatcher(user_pieces))
    window_proto = _window_proto(proto)
    family.sp_full = full
    family.sp_window = _processor(window_proto, path, "window encoder")
    family.raw_full = _raw_ids_encoder(full)
    family.raw_window = _raw_ids_encoder(family.sp_window)
    if model_type == "unigram":
        family.single_characters = _single_characters(pieces)
    model = Model(display_name(path), path, model_type, family)
    family.incremental, family.mode_note = _incremental_mode(pieces, model_type)
    if family.incremental and _merges_unused(pieces):
        family.use_symbol_encoders(
            _processor(_unused_as_normal(proto), path, "symbol encoder"),
            _processor(_unused_as_normal(window_proto), path, "symbol encoder"),
        )
    if family.incremental:
        family.segmenter = _whitespace_segments(proto, pieces)
    else:
        log.info("%s: %s; each edit re-encodes the whole text", model.name, model.mode_note)
    return model


class Pieces(NamedTuple):
    """A model's pieces: their texts and their types, in id order."""

    texts: list[str]
    types: list[int]


def _whitespace_segments(proto: Any, pieces: Pieces) -> Segmenter | None:
    """A BPE model's whitespace segments, when its own pieces prove that no token crosses them.

    Decided from the vocabulary, not the trainer flag: every piece that text can match or merges
    can form (user-defined ones too, matched before merging) must keep the space symbol at its
    start (or end, for whitespace as suffix), and the space symbol must be a piece of its own,
    so that no run of unknown characters joins across a segment start.

    Unigram models get none, though no piece crosses their segments either: SentencePiece sums a
    path's scores in 32-bit floats, so on a long text a near tie inside one segment is decided by
    the rounding of everything before it (tests/core/test_hard_cases.py shows one).
    """
    space = "\u2581" if proto.normalizer_spec.escape_whitespaces else " "
    suffix = proto.trainer_spec.treat_whitespace_as_suffix
    cut = WhitespaceSegmenter(space, suffix)
    space_is_piece = False
    for text, piece_type in zip(pieces.texts, pieces.types, strict=True):
        if piece_type not in (NORMAL, USER_DEFINED, UNUSED):
            continue
        if text == space and piece_type == NORMAL:
            space_is_piece = True
        # A segment can only begin inside a piece next to a space symbol inside it.
        if space not in (text[:-1] if suffix else text[1:]):
            continue
        if any(cut.cut_between(text[i - 1], text[i]) for i in range(1, len(text))):
            return None
    if not space_is_piece:
        return None
    joined, single_id = _character_cuts(proto, pieces)
    cut.use_character_cuts(joined, bool(proto.trainer_spec.byte_fallback), single_id)
    return cut


def _character_cuts(proto: Any, pieces: Pieces) -> tuple[vec[u8], vec[i32]]:
    """Per code point: 1 when a token may hold it after its first character (it stands there in
    some piece, or it is no piece of its own in a model without byte fallback, whose <unk>
    joins the one before; other characters always begin a token), and the id of the piece that
    is exactly that character (-1: none)."""
    inner: set[int] = set()
    single: dict[int, int] = {}
    for index, (text, piece_type) in enumerate(zip(pieces.texts, pieces.types, strict=True)):
        if piece_type not in (NORMAL, USER_DEFINED, UNUSED):
            continue
        inner.update(map(ord, text[1:]))
        # A one-character UNUSED piece is not what SentencePiece outputs for it: <unk> is.
        if len(text) == 1 and piece_type != UNUSED:
            single[ord(text)] = index
    byte_fallback = bool(proto.trainer_spec.byte_fallback)
    top = max(inner | set(single), default=0) + 1
    # Filled from the pieces' characters, not by visiting every code point up to the largest.
    runs_on = [0 if byte_fallback else 1] * top
    ids = [-1] * top
    for cp, index in single.items():
        runs_on[cp] = 0
        ids[cp] = index
    for cp in inner:
        runs_on[cp] = 1
    return vec[u8](runs_on), vec[i32](ids)


def _vocabulary(
    proto: Any, pieces: Pieces, sp: spm.SentencePieceProcessor
) -> tuple[Vocabulary, list[str]]:
    """The model's pieces with their lengths and kinds, and its USER_DEFINED pieces."""
    vocab = Vocabulary()
    vocab.unk_id = sp.unk_id()
    vocab.byte_fallback = proto.trainer_spec.byte_fallback
    user_pieces: list[str] = []
    for text, piece_type in zip(pieces.texts, pieces.types, strict=True):
        flags = 0
        length = len(text)
        if piece_type == BYTE:
            flags |= FLAG_BYTE
            length = 0 if 0x80 <= byte_piece_value(text) < 0xC0 else 1
            if length == 0:
                flags |= FLAG_CONTINUATION
        elif piece_type == UNKNOWN:
            flags |= FLAG_UNKNOWN
            length = LENGTH_IN_CONTEXT
        elif piece_type == CONTROL:
            flags |= FLAG_SPECIAL
            length = 0
        elif piece_type == USER_DEFINED:
            flags |= FLAG_SPECIAL
            user_pieces.append(text)
        if piece_type != BYTE and text and all(c.isspace() or c == "\u2581" for c in text):
            flags |= FLAG_WHITESPACE
        vocab.add(text, length, flags)
    return vocab, user_pieces


def _norm_rules(proto: Any, path: str, user_pieces: list[str]) -> NormRules:
    ns = proto.normalizer_spec
    rules = NormRules()
    rules.add_dummy_prefix = ns.add_dummy_prefix
    rules.dummy_as_suffix = proto.trainer_spec.treat_whitespace_as_suffix
    rules.escape_whitespaces = ns.escape_whitespaces
    rules.remove_extra_whitespaces = ns.remove_extra_whitespaces
    if ns.precompiled_charsmap:
        try:
            rules.charsmap = Charsmap(bytes(ns.precompiled_charsmap))
        except CharsmapError as exc:
            raise ModelError(path, str(exc)) from None
    if user_pieces:
        # The normalizer protects user pieces (any length) from its rules.
        rules.matcher = UserMatcher(user_pieces)
    return rules


def _window_proto(proto: Any) -> Any:
    """The model with an identity normalizer: windows are cut from normalized text."""
    window_proto = _model_pb2().ModelProto()
    window_proto.CopyFrom(proto)
    wn = window_proto.normalizer_spec
    wn.name = "identity"
    wn.precompiled_charsmap = b""
    wn.add_dummy_prefix = False
    wn.remove_extra_whitespaces = False
    wn.escape_whitespaces = False
    wn.normalization_rule_tsv = ""
    window_proto.trainer_spec.treat_whitespace_as_suffix = False
    return window_proto


def _unused_as_normal(proto: Any) -> Any:
    """The model with UNUSED pieces made NORMAL: the same merges, without the final re-split, so
    its output is the merge symbols themselves."""
    out = _model_pb2().ModelProto()
    out.CopyFrom(proto)
    for piece in out.pieces:
        if piece.type == UNUSED:
            piece.type = NORMAL
    return out


def _processor(proto: Any, path: str, what: str) -> spm.SentencePieceProcessor:
    sp = spm.SentencePieceProcessor()
    try:
        sp.LoadFromSerializedProto(proto.SerializeToString())
    except Exception as exc:
        raise ModelError(path, f"SentencePiece rejects its {what}: {short_error(exc)}") from None
    return sp


def _merges_unused(pieces: Pieces) -> bool:
    """Whether some UNUSED piece can be formed by a merge (and so re-split at the end)."""
    normal = _mergeable(pieces)
    for u, piece_type in zip(pieces.texts, pieces.types, strict=True):
        if piece_type != UNUSED or len(u) < 2:
            continue
        if any(_formable(u[:c], normal) and _formable(u[c:], normal) for c in range(1, len(u))):
            return True
    return False


def _mergeable(pieces: Pieces) -> dict[str, int]:
    return {
        text: t
        for text, t in zip(pieces.texts, pieces.types, strict=True)
        if t in (NORMAL, USER_DEFINED, UNUSED)
    }


def _single_characters(pieces: Pieces) -> set[str] | None:
    """The characters that are a piece of their own (normal or user-defined), when every such
    piece is made of them and no unused or control piece is one character: then an <unk> of the
    unigram lattice covers exactly a run of the other characters (SentencePieceFamily reads its
    length from the text). None otherwise."""
    known = {
        text
        for text, piece_type in zip(pieces.texts, pieces.types, strict=True)
        if len(text) == 1 and piece_type in (NORMAL, USER_DEFINED)
    }
    for text, piece_type in zip(pieces.texts, pieces.types, strict=True):
        if piece_type in (NORMAL, USER_DEFINED) and not known.issuperset(text):
            return None
        if piece_type in (UNUSED, CONTROL) and len(text) == 1:
            return None
    return known


def _incremental_mode(pieces: Pieces, model_type: str) -> tuple[bool, str]:
    """Whether the window algorithm is exact for this model, and why not when it is not."""
    if model_type != "bpe":
        return False, f"{model_type} model (only BPE is re-tokenized incrementally)"
    normal: dict[str, int] = {}
    reserved: set[str] = set()
    unused: list[str] = []
    for text, piece_type in zip(pieces.texts, pieces.types, strict=True):
        if piece_type in (NORMAL, USER_DEFINED, UNUSED):
            normal[text] = piece_type
            if piece_type == UNUSED:
                unused.append(text)
        else:
            reserved.add(text)
    clash = [p for p in normal if p in reserved]
    if clash:
        return False, f"piece {clash[0]!r} is both a normal and a reserved piece"
    # SentencePiece splits a merged UNUSED piece with the pair last pushed for it anywhere in the
    # text: local only when each UNUSED piece can be formed in one way.
    for u in unused:
        splits = 0
        for cut in range(1, len(u)):
            left, right = u[:cut], u[cut:]
            if _formable(left, normal) and _formable(right, normal):
                splits += 1
        if splits > 1:
            return False, (
                f"UNUSED piece {u!r} can be formed in {splits} ways, so its split depends on the "
                "whole text"
            )
    return True, "incremental"


def _formable(s: str, normal: dict[str, int]) -> bool:
    if len(s) == 1:
        return True
    piece_type = normal.get(s)
    return piece_type is not None and piece_type != USER_DEFINED


def _raw_ids_encoder(sp: spm.SentencePieceProcessor) -> Any:
    """The pybind11 ids encoder behind sp.encode, when this sentencepiece build has the one it
    was written against (checked on a sample), else None."""
    raw = getattr(getattr(sp, "_processor", None), "_EncodeAsIds", None)
    if raw is None:
        return None
    probe = "Tokenline ▁ probe  123 \n"
    try:
        if raw(probe, False, 0, 0.0, False, False, False) == sp.encode(probe):
            return raw
    except Exception:
        pass
    return None
