"""Loading a Hugging Face `tokenizer.json` into a Model, with clear errors for bad files.

Interpreted: runs once per model, through the untyped `tokenizers` bindings and the file's JSON.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from librt.vecs import vec
from mypy_extensions import u8

from tokenline.core import hfnormloader
from tokenline.core.family import Family
from tokenline.core.hfbpeloader import llama_family, llama_rules
from tokenline.core.hfbytelevel import HFByteLevelFamily, HFCoder, LibraryPreTokens
from tokenline.core.hffamily import HFFamily
from tokenline.core.model import Model
from tokenline.core.modelfile import ModelError, display_name, short_error
from tokenline.core.pretokens import CL100K, GPT2_HF, reads_little, run_class
from tokenline.core.spacecuts import SpaceCuts
from tokenline.core.usermatch import UserMatcher
from tokenline.core.vocab import (
    FLAG_BYTE,
    FLAG_CONTINUATION,
    FLAG_SPECIAL,
    FLAG_UNKNOWN,
    FLAG_WHITESPACE,
    Vocabulary,
    byte_piece_value,
)

# The model types this family runs, and how Model.model_type names them.
MODEL_TYPES = {
    "BPE": "bpe (tokenizer.json)",
    "WordPiece": "wordpiece (tokenizer.json)",
    "Unigram": "unigram (tokenizer.json)",
    "WordLevel": "wordlevel (tokenizer.json)",
}


def load_hf_json(text: str, path: str = "<json>", parsed: Any = None) -> Model:
    """A Model from the text of a tokenizer.json (path names it in errors; `parsed` is the text's
    JSON when the caller has already read it)."""
    spec = checked_spec(parse_json(text, path) if parsed is None else parsed, path)
    tok = _tokenizer(text, path)
    spec = _typed(spec, tok)
    model_type = spec["model"]["type"]
    vocab, inserted = _vocabulary(tok, spec)
    pattern, why = _piece_pattern(spec)
    rules, unless = llama_rules(spec, tok)
    words, words_why = hfnormloader.word_level(tok, spec, vocab)
    family: Family
    if pattern is not None:
        family = _byte_level_family(tok, spec, vocab, pattern)
    elif rules is not None:
        family = llama_family(tok, spec, vocab, rules)
    elif words is not None:
        family = words
    else:
        hf = HFFamily(vocab, tok, inserted)
        marker = _metaspace_marker(spec)
        hf.marker = marker or _replaced_space(spec)
        prefix = spec["model"].get("continuing_subword_prefix")
        hf.word_prefix = prefix if model_type == "WordPiece" and prefix else ""
        added = tok.get_added_tokens_decoder()
        hf.added = set(added)
        hf.raw_added = [a.content for a in added.values() if not a.normalized]
        hf.loses_deleted = any(
            n.get("type") == "Precompiled" for n in _nodes(spec.get("normalizer"))
        )
        if _words_are_independent(spec):
            hf.use_words(_word_joins(vocab, spec), UserMatcher(_added_contents(spec)))
        elif _splits_at_spaces(spec, tok):
            hf.use_spaces(SpaceCuts(tok.normalizer, marker))
        elif unless:
            hf.mode_note = f"tokenizer.json models re-encode whole unless {unless}"
        elif model_type in ("Unigram", "BPE") and marker:
            hf.mode_note = f"tokenizer.json models re-encode whole unless {NOT_SPACES}"
        elif why or words_why:
            hf.mode_note = f"tokenizer.json models re-encode whole unless {why or words_why}"
        family = hf
    return Model(display_name(path), path, MODEL_TYPES[model_type], family)


# Why a byte-level BPE file is not edited piece by piece (the ends of "re-encode whole unless").
NOT_PIECES = {
    "pre": "byte-level with a pattern known to read only a few characters past each cut",
    "prefix": "byte-level without a space added before the text",
    "model": "byte-level BPE without dropout, word prefixes or suffixes",
    "bytes": "byte-level with every byte UTF-8 uses in the vocabulary",
    "added": "byte-level with added tokens matched as written (no lstrip, rstrip, single_word)",
}


def _piece_pattern(spec: dict[str, Any]) -> tuple[str | None, str]:
    """The pre-tokenizer pattern of a byte-level BPE file edited piece by piece, else None and
    why not ("" for files that are not byte-level BPE). The library's encode of such a file is
    its pre-tokenizer's pieces, each encoded alone by its BPE model: a ByteLevel pre-tokenizer
    with GPT-2's pattern, or a Split by a known pattern then ByteLevel without one; no
    normalizer or one kept in step (hfnormloader), no prefix space, a BPE without dropout and
    with every byte UTF-8 uses a token (no unknown token), and added tokens matched as
    written."""
    model = spec["model"]
    if model.get("type") != "BPE" or not _uses(spec, "ByteLevel"):
        return None, ""
    found = _split_pattern(spec.get("pre_tokenizer"))
    if found is None:
        return None, NOT_PIECES["pre"]
    pattern, prefix = found
    if prefix:
        return None, NOT_PIECES["prefix"]
    if hfnormloader.normalizer_problem(spec):
        return None, hfnormloader.normalizer_problem(spec)
    if any(model.get(k) for k in ("dropout", "continuing_subword_prefix", "end_of_word_suffix")):
        return None, NOT_PIECES["model"]
    vocab = model.get("vocab")
    # UTF-8 never uses 0xC0, 0xC1 or 0xF5 and above (GPT-NeoX's vocabulary lacks them).
    used = [c for c, b in _byte_decoder().items() if b < 0xF5 and b not in (0xC0, 0xC1)]
    if not isinstance(vocab, dict) or any(c not in vocab for c in used):
        return None, NOT_PIECES["bytes"]
    loose = ("lstrip", "rstrip", "single_word")
    for a in spec.get("added_tokens") or []:
        if not isinstance(a, dict) or any(a.get(key) for key in loose) or not a.get("content"):
            return None, NOT_PIECES["added"]
    return pattern, ""


# A Split whose pieces are the pattern's matches, each alone: Isolated, or Removed inverted (gaps
# removed: MiniMax's files), which agree for patterns matching every character (the known ones).
_KEEP_MATCHES = (("Isolated", False), ("Removed", True))


def _split_pattern(pre: Any) -> tuple[str, bool] | None:
    """The pattern a byte-level pre-tokenizer cuts by and whether it adds a prefix space, when
    the pattern is one `reach_after` bounds."""
    if not isinstance(pre, dict):
        return None
    if pre.get("type") == "ByteLevel" and pre.get("use_regex", True):
        return GPT2_HF, bool(pre.get("add_prefix_space", True))
    members = pre.get("pretokenizers") if pre.get("type") == "Sequence" else None
    if not isinstance(members, list) or len(members) != 2:
        return None
    split, level = members
    if not isinstance(split, dict) or not isinstance(level, dict):
        return None
    pattern = split.get("pattern")
    regex = pattern.get("Regex") if isinstance(pattern, dict) else None
    if (
        split.get("type") != "Split"
        or not isinstance(regex, str)
        or not reads_little(regex)
        or regex == CL100K  # its {1,3}+ is not possessive to the library's regex engine
        or (split.get("behavior"), bool(split.get("invert"))) not in _KEEP_MATCHES
        or level.get("type") != "ByteLevel"
        or level.get("use_regex", True)
    ):
        return None
    return regex, bool(level.get("add_prefix_space", True))


def _byte_level_family(tok: Any, spec: dict[str, Any], vocab: Vocabulary, pattern: str) -> Any:
    """An HFByteLevelFamily for a file _piece_pattern accepts."""
    from tokenizers import Tokenizer

    ignore = bool(spec["model"].get("ignore_merges"))
    plain = tok.model
    if ignore:
        # The merges alone, for parts of long pieces: the same model without the shortcut.
        bare = dict(spec, model=dict(spec["model"], ignore_merges=False), added_tokens=[])
        plain = Tokenizer.from_str(json.dumps(bare)).model
    decoder = _byte_decoder()
    table = {b: ord(c) for c, b in decoder.items()}
    # The library's ids for added tokens (it numbers them itself when the file's ids clash).
    added_ids = set(tok.get_added_tokens_decoder())
    by_id: list[bytes] = []
    added: list[int] = []
    for i in range(vocab.size()):
        piece = vocab.piece(i)
        plain_piece = i not in added_ids and all(c in decoder for c in piece)
        by_id.append(bytes(decoder[c] for c in piece) if plain_piece else b"")
        added.append(1 if i in added_ids else 0)
    coder = HFCoder(tok, plain, ignore, table, by_id)
    if hfnormloader.unicode_forms(spec.get("normalizer")):
        kind = run_class(pattern)
        return hfnormloader.byte_level(tok, spec, vocab, pattern, coder, vec[u8](added), kind)
    pieces = LibraryPreTokens(pattern, tok.pre_tokenizer)
    family = HFByteLevelFamily(vocab, coder, pieces, vec[u8](added))
    family.use_runs(run_class(pattern))
    return family


def parse_json(text: str, path: str) -> Any:
    """The file's JSON (ModelError when it is not JSON)."""
    if not text.strip():
        raise ModelError(path, "the file is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelError(
            path, f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None


def checked_spec(spec: Any, path: str) -> dict[str, Any]:
    """A tokenizer.json's JSON, checked to hold a model of a type this family runs; a model
    without a "type" (files written by older `tokenizers`) is typed as the library reads it."""
    model = spec.get("model") if isinstance(spec, dict) else None
    if not isinstance(model, dict):
        raise ModelError(path, 'not a Hugging Face tokenizer.json (it has no "model")')
    model_type = model.get("type")
    if model_type is not None and model_type not in MODEL_TYPES:
        raise ModelError(
            path,
            f"unsupported tokenizer.json model type {model_type!r} "
            f"(supported: {', '.join(MODEL_TYPES)})",
        )
    out: dict[str, Any] = spec
    return out


def _typed(spec: dict[str, Any], tok: Any) -> dict[str, Any]:
    """The spec with its model's "type": the file's own, else the one `tokenizers` inferred
    from the fields when it read the file (merges: BPE; continuing_subword_prefix and
    max_input_chars_per_word: WordPiece; vocab and unk_token: WordLevel; a list of [piece,
    score]: Unigram; tokenizers/src/models/mod.rs tries them in that order)."""
    if "type" in spec["model"]:
        return spec
    return dict(spec, model=dict(spec["model"], type=type(tok.model).__name__))


def _tokenizer(text: str, path: str) -> Any:
    """The file's Tokenizer, set to encode whole texts: no truncation or padding (a count is of
    all the text), no post-processor (it only trims offsets when no special tokens are added)."""
    from tokenizers import Tokenizer

    try:
        tok = Tokenizer.from_str(text)
    except Exception as exc:
        raise ModelError(path, f"tokenizers rejects it: {short_error(exc)}") from None
    tok.no_truncation()
    tok.no_padding()
    tok.post_processor = None
    return tok


def _vocabulary(tok: Any, spec: dict[str, Any]) -> tuple[Vocabulary, vec[u8]]:
    """Pieces (the token strings), their lengths and kinds, and which are inserted markers."""
    pieces: dict[int, str] = {i: p for p, i in tok.get_vocab(with_added_tokens=True).items()}
    added = {a["id"]: a for a in spec.get("added_tokens") or [] if isinstance(a, dict)}
    byte_level = _uses(spec, "ByteLevel")
    marker = _metaspace_marker(spec)
    byte_fallback = bool(spec["model"].get("byte_fallback"))
    unk = spec["model"].get("unk_token")
    # A Unigram model names its unknown token by index.
    unk_index = spec["model"].get("unk_id") if spec["model"]["type"] == "Unigram" else None
    vocab = Vocabulary()
    vocab.unk_id = -1
    vocab.byte_fallback = byte_fallback
    inserted: list[int] = []
    for i in range(max(pieces, default=-1) + 1):
        piece = pieces.get(i, "")
        if i in added:
            flags, length = (FLAG_SPECIAL if added[i].get("special") else 0), len(piece)
        elif byte_level:
            flags, length = _byte_level_kind(piece)
        elif byte_fallback and byte_piece_value(piece) >= 0:
            flags, length = _fallback_kind(byte_piece_value(piece))
        else:
            flags, length = 0, len(piece)
        if piece and not flags & FLAG_BYTE and _blank(piece, byte_level, marker):
            flags |= FLAG_WHITESPACE
        if (unk is not None and piece == unk) or (unk_index is not None and i == unk_index):
            flags |= FLAG_UNKNOWN
            vocab.unk_id = i
        inserted.append(1 if marker and piece and piece == marker * len(piece) else 0)
        vocab.add(piece, length, flags)
    return vocab, vec[u8](inserted)


def _words_are_independent(spec: dict[str, Any]) -> bool:
    """Whether each word is encoded alone, so windows of whole words are exact: WordPiece after
    BERT's pre-tokenizer (white space and punctuation) and normalizer (or none), which map each
    character on its own, and added tokens matched as they are written (not normalized, not
    stripping or needing white space around them)."""
    model = spec["model"]
    if model.get("type") != "WordPiece":
        return False
    pre = spec.get("pre_tokenizer")
    if not isinstance(pre, dict) or pre.get("type") != "BertPreTokenizer":
        return False
    norm = spec.get("normalizer")
    if norm is not None and (not isinstance(norm, dict) or norm.get("type") != "BertNormalizer"):
        return False
    loose = ("normalized", "lstrip", "rstrip", "single_word")
    for a in spec.get("added_tokens") or []:
        if not isinstance(a, dict) or any(a.get(key) for key in loose) or not a.get("content"):
            return False
    prefix = model.get("continuing_subword_prefix")
    return isinstance(prefix, str) and prefix != ""


# Why a Metaspace file is not cut into windows at spaces (the end of "re-encode whole unless").
NOT_SPACES = (
    "Metaspace splits at spaces (split: true), after a normalizer of Unicode forms, case, "
    "accents, precompiled rules, right strips and replacements without spaces, with added "
    "tokens that hold no space"
)
# Normalizers that map each character (or grapheme) on its own and add no space before a space.
LOCAL_NORMALIZERS = {
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "Lowercase",
    "StripAccents",
    "Precompiled",
    "Nmt",
}
# Replace patterns that only rewrite runs of spaces (which start at the first space of the run).
SPACE_RUNS = {" {2,}", " +", "  +"}


def _splits_at_spaces(spec: dict[str, Any], tok: Any) -> bool:
    """Whether a Unigram or BPE file is encoded piece by piece from each space (see spacecuts):
    Metaspace with split (alone, or after WhitespaceSplit with a marker before every word), a
    normalizer that keeps a space a space and stops at it, a model without dropout, and added
    tokens that hold no white space (so none reaches across a cut) and strip none."""
    model = spec["model"]
    if model.get("type") not in ("Unigram", "BPE") or model.get("dropout"):
        return False
    marker = _metaspace_marker(spec)
    if not marker or marker.isspace() or not _metaspace_splits(spec.get("pre_tokenizer")):
        return False
    norm = spec.get("normalizer")
    if norm is not None and not _local_normalizer(norm, marker):
        return False
    if tok.normalizer is not None and tok.normalizer.normalize_str("a b") != "a b":
        return False
    loose = ("lstrip", "rstrip", "single_word")
    for a in spec.get("added_tokens") or []:
        if not isinstance(a, dict) or any(a.get(key) for key in loose):
            return False
        content = a.get("content")
        if not isinstance(content, str) or not content or marker in content:
            return False
        if any(c.isspace() for c in content):
            return False
    return True


def _metaspace_splits(pre: Any) -> bool:
    """Metaspace splitting at every marker, or WhitespaceSplit then a Metaspace that puts a
    marker before every word."""
    if not isinstance(pre, dict):
        return False
    if pre.get("type") == "Metaspace":
        return bool(pre.get("split", True))
    members = pre.get("pretokenizers") if pre.get("type") == "Sequence" else None
    if not isinstance(members, list) or len(members) != 2:
        return False
    first, meta = members
    return (
        isinstance(first, dict)
        and first.get("type") == "WhitespaceSplit"
        and isinstance(meta, dict)
        and meta.get("type") == "Metaspace"
        and _prepends_always(meta)
    )


def _prepends_always(meta: dict[str, Any]) -> bool:
    scheme = meta.get("prepend_scheme")
    if scheme is None:
        return bool(meta.get("add_prefix_space", True))
    return bool(scheme == "always")


def _local_normalizer(node: Any, marker: str) -> bool:
    """Whether a normalizer (or every member of a sequence) is one spacecuts reasons about."""
    if not isinstance(node, dict):
        return False
    node_type = node.get("type")
    if node_type == "Sequence":
        members = node.get("normalizers")
        return isinstance(members, list) and all(_local_normalizer(m, marker) for m in members)
    if node_type in LOCAL_NORMALIZERS:
        return True
    if node_type == "Strip":
        return not node.get("strip_left", True)
    if node_type == "Replace":
        pattern = node.get("pattern")
        content = node.get("content")
        if not isinstance(pattern, dict) or not isinstance(content, str):
            return False
        if "Regex" in pattern:
            regex: Any = pattern["Regex"]
            return bool(regex in SPACE_RUNS and content in (" ", marker))
        literal = pattern.get("String")
        if not isinstance(literal, str) or not literal or " " in literal:
            return False
        # A longer pattern could end a window in white space that only it makes.
        return len(literal) == 1 or not any(c.isspace() or c == marker for c in content)
    return False


def _word_joins(vocab: Vocabulary, spec: dict[str, Any]) -> vec[u8]:
    """Per id: 1 for a piece that continues a word (it starts with the model's "##")."""
    prefix = spec["model"]["continuing_subword_prefix"]
    return vec[u8]([1 if vocab.piece(i).startswith(prefix) else 0 for i in range(vocab.size())])


def _added_contents(spec: dict[str, Any]) -> list[str]:
    return [a["content"] for a in spec.get("added_tokens") or []]


def _nodes(node: Any) -> list[dict[str, Any]]:
    """A pre-tokenizer, normalizer or decoder and, through its Sequences, all it holds."""
    if not isinstance(node, dict):
        return []
    out = [node]
    for key in ("pretokenizers", "normalizers", "decoders"):
        for child in node.get(key) or []:
            out.extend(_nodes(child))
    return out


def _uses(spec: dict[str, Any], node_type: str) -> bool:
    """Whether the pre-tokenizer (or a Sequence's member) or the decoder is of this type."""
    nodes = _nodes(spec.get("pre_tokenizer")) + _nodes(spec.get("decoder"))
    return any(n.get("type") == node_type for n in nodes)


def _metaspace_marker(spec: dict[str, Any]) -> str:
    """The character a Metaspace pre-tokenizer puts for spaces ("" when there is none)."""
    for n in _nodes(spec.get("pre_tokenizer")):
        if n.get("type") == "Metaspace":
            replacement = n.get("replacement", "\u2581")
            return replacement if isinstance(replacement, str) else "\u2581"
    return ""


def _replaced_space(spec: dict[str, Any]) -> str:
    """What a normalizer writes for a space (Llama 2 style: Replace " " by "▁"), else ""."""
    for n in _nodes(spec.get("normalizer")):
        if n.get("type") == "Replace" and n.get("pattern") == {"String": " "}:
            content = n.get("content")
            if isinstance(content, str) and len(content) == 1:
                return content
    return ""


@cache
def _byte_decoder() -> dict[str, int]:
    """GPT-2's printable stand-ins for the 256 bytes, reversed."""
    keep = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    chars = list(keep)
    extra = 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(keep, chars, strict=True)}


def _byte_level_kind(piece: str) -> tuple[int, int]:
    """Flags and length of a byte-level piece: a part of a character is a byte token (with no
    character of its own when it holds no character's first byte)."""
    table = _byte_decoder()
    if not piece or any(c not in table for c in piece):
        return 0, len(piece)
    raw = bytes(table[c] for c in piece)
    try:
        return 0, len(raw.decode("utf-8"))
    except UnicodeDecodeError:
        pass
    starts = sum(1 for b in raw if not 0x80 <= b < 0xC0)
    return (FLAG_BYTE | (FLAG_CONTINUATION if starts == 0 else 0)), starts


def _fallback_kind(value: int) -> tuple[int, int]:
    """Flags and length of a byte-fallback piece <0xXX>."""
    if 0x80 <= value < 0xC0:
        return FLAG_BYTE | FLAG_CONTINUATION, 0
    return FLAG_BYTE, 1


def _blank(piece: str, byte_level: bool, marker: str) -> bool:
    """Whether a piece stands for white space only."""
    if byte_level:
        table = _byte_decoder()
        if all(c in table for c in piece):
            try:
                piece = bytes(table[c] for c in piece).decode("utf-8")
            except UnicodeDecodeError:
                return False
    return all(c.isspace() or (marker != "" and c == marker) for c in piece)
