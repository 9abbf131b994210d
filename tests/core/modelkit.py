"""Models for the differential tests: trained here in unusual configurations, or built by hand.

Training a 300-3000 piece model takes about a second, so every configuration that changes how
SentencePiece normalizes or segments text gets its own model.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import sentencepiece as spm

EXTRA_SENTENCES = [
    "中文字符测试，日本語のテキストも少し。한국어 문장도 있습니다.",
    "emoji 😀 and a family 👨\u200d👩\u200d👧 and flags 🇯🇵 in text",
    "ﬁnance ① Ｈello ＡＢＣ ｶﾀｶﾅ ⅷ ㎏",
    "café e\u0301 naïve résumé Ångström",
    "tabs\tand\u3000ideographic spaces\u00a0nbsp",
    "def f(x):\n    return x ** 2  # code\n",
    "## Heading\n\n- item *one*\n- item **two** `code`\n",
    "[REF] see [REFERENCE_DOC_1] and <tool>call</tool>",
]

# name -> SentencePieceTrainer options (beyond the corpus and model_prefix).
TRAINED: dict[str, dict[str, Any]] = {
    "bpe-default": {},  # nmt_nfkc, dummy prefix, remove_extra_whitespaces
    "bpe-no-dummy": {"add_dummy_prefix": False},
    "bpe-keep-whitespace": {"remove_extra_whitespaces": False},
    "bpe-suffix": {"treat_whitespace_as_suffix": True},
    "bpe-suffix-keep-ws": {"treat_whitespace_as_suffix": True, "remove_extra_whitespaces": False},
    "bpe-byte-fallback": {"byte_fallback": True, "vocab_size": 1200},
    "bpe-user-defined": {
        "user_defined_symbols": ["[REF]", "[REFERENCE_DOC_1]", "<tool>", "</tool>", "ab", "the"],
    },
    "bpe-control": {"control_symbols": ["<ctrl>", "[INST]"]},
    "bpe-nfkc": {"normalization_rule_name": "nfkc"},
    "bpe-nfkc-cf": {"normalization_rule_name": "nmt_nfkc_cf"},
    "bpe-identity": {"normalization_rule_name": "identity"},
    "bpe-no-split": {
        "split_by_whitespace": False,
        "remove_extra_whitespaces": False,
        "vocab_size": 1500,
    },
    "bpe-digits": {"split_digits": True, "allow_whitespace_only_pieces": True},
    "bpe-small": {"vocab_size": 300},
    "bpe-large": {"vocab_size": 3000},
    "bpe-custom-rules": {"normalization_rule_tsv": "RULES"},
    "unigram": {"model_type": "unigram"},
    # sentencepiece's own test model: unigram, 1,000 pieces, trained on Botchan.
    "unigram-1000": {"model_type": "unigram", "vocab_size": 1000},
    "unigram-no-split": {
        "model_type": "unigram",
        "split_by_whitespace": False,
        "remove_extra_whitespaces": False,
    },
    "unigram-suffix-nfkc-cf": {
        "model_type": "unigram",
        "treat_whitespace_as_suffix": True,
        "normalization_rule_name": "nmt_nfkc_cf",
    },
    "unigram-byte-fallback-digits": {
        "model_type": "unigram",
        "byte_fallback": True,
        "split_digits": True,
        "remove_extra_whitespaces": False,
        "vocab_size": 1200,
    },
    "char": {"model_type": "char", "vocab_size": 400},
    "word": {"model_type": "word", "vocab_size": 2000},
}

# Custom normalization rules whose matches span several characters (source -> target).
CUSTOM_RULES = [
    ("ab", "X"),
    ("abc", "Y"),  # longer match wins over "ab"
    ("ß", "ss"),  # one character to two
    ("--", "\u2014"),
    ("  ", " "),  # two spaces to one
    ("e\u0301", "\u00e9"),  # combining sequence
    ("x y", "xy"),  # a rule across a space
    ("\t", " "),
    ("\u200b", ""),  # deleted character
]


def corpus_sentences(botchan: str, count: int = 3000) -> list[str]:
    lines = [ln for ln in botchan.splitlines() if ln.strip()][:count]
    return lines + EXTRA_SENTENCES * 25


def write_rules(path: Path) -> Path:
    rows = []
    for src, dst in CUSTOM_RULES:
        rows.append(
            " ".join(f"{ord(c):X}" for c in src) + "\t" + " ".join(f"{ord(c):X}" for c in dst)
        )
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def train(name: str, out_dir: Path, botchan: str) -> Path:
    options = dict(TRAINED[name])
    prefix = out_dir / name
    model_path = prefix.with_suffix(".model")
    if model_path.exists():
        return model_path
    if options.get("normalization_rule_tsv") == "RULES":
        options["normalization_rule_tsv"] = str(write_rules(out_dir / "rules.tsv"))
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus_sentences(botchan)),
        model_prefix=str(prefix),
        vocab_size=options.pop("vocab_size", 800),
        model_type=options.pop("model_type", "bpe"),
        hard_vocab_limit=False,
        minloglevel=2,
        num_threads=1,
        **options,
    )
    return model_path


# -- hand-built model protos ---------------------------------------------------------------------

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def pb2() -> Any:
    return importlib.import_module("sentencepiece.sentencepiece_model_pb2")


def build(path: Path, pieces: list[tuple[str, float, int]], **options: Any) -> Path:
    """A ModelProto file from (piece, score, type) rows (options: those of build_bytes)."""
    path.write_bytes(build_bytes(pieces, **options))
    return path


def build_bytes(
    pieces: list[tuple[str, float, int]],
    *,
    byte_fallback: bool = False,
    add_dummy_prefix: bool = True,
    remove_extra_whitespaces: bool = False,
    model_type: int = 2,
    treat_whitespace_as_suffix: bool = False,
    escape_whitespaces: bool = True,
    normalizer: str = "identity",
    precompiled_charsmap: bytes = b"",
) -> bytes:
    """The serialized ModelProto that build() writes (normalizer: a name and its charsmap)."""
    proto = pb2().ModelProto()
    rows: list[tuple[str, float, int]] = [("<unk>", 0.0, UNKNOWN), ("<s>", 0.0, CONTROL)]
    rows.append(("</s>", 0.0, CONTROL))
    if byte_fallback:
        rows += [(f"<0x{b:02X}>", 0.0, BYTE) for b in range(256)]
    rows += pieces
    for text, score, kind in rows:
        p = proto.pieces.add()
        p.piece = text
        p.score = score
        p.type = kind
    ts = proto.trainer_spec
    ts.model_type = model_type
    ts.byte_fallback = byte_fallback
    ts.treat_whitespace_as_suffix = treat_whitespace_as_suffix
    ts.unk_id, ts.bos_id, ts.eos_id, ts.pad_id = 0, 1, 2, -1
    ns = proto.normalizer_spec
    ns.name = normalizer
    ns.precompiled_charsmap = precompiled_charsmap
    ns.add_dummy_prefix = add_dummy_prefix
    ns.remove_extra_whitespaces = remove_extra_whitespaces
    ns.escape_whitespaces = escape_whitespaces
    data: bytes = proto.SerializeToString()
    return data


def chars(alphabet: str, score: float = -100.0) -> list[tuple[str, float, int]]:
    return [(c, score, NORMAL) for c in alphabet]


def hand_built(out_dir: Path) -> dict[str, Path]:
    """Models that no trainer makes but real files can contain."""
    out: dict[str, Path] = {}
    alphabet = "abcdxyz\u2581"
    # Every merge has the same score: order falls back to leftmost-first.
    tied = chars(alphabet) + [
        (p, -1.0, NORMAL)
        for p in ["ab", "bc", "cd", "abc", "bcd", "abcd", "aa", "aaa", "aaaa", "\u2581a", "xy"]
    ]
    out["hand-tied"] = build(out_dir / "hand-tied.model", tied)
    # Long pieces of one letter: one edit at the start re-pairs the whole run.
    runs = chars("ab\u2581") + [("a" * k, -float(k), NORMAL) for k in range(2, 17)]
    runs += [("b" * k, -float(k) - 0.5, NORMAL) for k in range(2, 9)]
    out["hand-runs"] = build(out_dir / "hand-runs.model", runs)
    # UNUSED pieces formed in exactly one way: their split is local.
    unused_one = [
        *chars(alphabet),
        ("ab", -1.0, NORMAL),
        ("cd", -1.5, NORMAL),
        ("abcd", -0.5, UNUSED),  # only ab + cd
        ("xy", -2.0, UNUSED),
        ("xyz", -0.1, NORMAL),
    ]
    out["hand-unused-local"] = build(out_dir / "hand-unused-local.model", unused_one)
    # An UNUSED piece with several splits: the last pair pushed anywhere in the text decides.
    unused_many = [
        *chars(alphabet),
        ("ab", -1.0, NORMAL),
        ("bc", -1.0, NORMAL),
        ("abc", -0.5, UNUSED),  # ab + c or a + bc
        ("abcd", -0.2, NORMAL),
        ("cd", -3.0, NORMAL),
    ]
    out["hand-unused-global"] = build(out_dir / "hand-unused-global.model", unused_many)
    # Merges through characters that are not pieces themselves, without byte fallback.
    no_chars = [*chars("abc▁"), ("ét", -1.0, NORMAL), ("xé", -0.5, NORMAL)]
    out["hand-unknown-merge"] = build(out_dir / "hand-unknown-merge.model", no_chars)
    # User-defined pieces that overlap, nest and reach across what a window would cut.
    user = [
        *chars(alphabet + "[]REF_DOC1<>/tol"),
        ("[REF]", 0.0, USER_DEFINED),
        ("[REFERENCE_DOC_1]", 0.0, USER_DEFINED),
        ("<tool>", 0.0, USER_DEFINED),
        ("ab", 0.0, USER_DEFINED),
        ("aba", 0.0, USER_DEFINED),
        ("ba", -1.0, NORMAL),
        ("bab", -0.5, NORMAL),
        ("RE", -1.0, NORMAL),
        ("REF", -0.8, NORMAL),
    ]
    out["hand-user"] = build(out_dir / "hand-user.model", user, byte_fallback=True)
    # A control piece whose text is also typed by the user.
    control = [*chars("<s>/ab▁"), ("<s", -1.0, NORMAL), ("ab", -1.0, NORMAL)]
    out["hand-control-text"] = build(out_dir / "hand-control-text.model", control)
    return out


def random_unused_model(path: Path, seed: int) -> Path:
    """A random small BPE vocabulary over "abcd" in which some pieces are UNUSED.

    Seed 46 gives a model whose UNUSED pieces can be formed in several ways, where SentencePiece's
    output for one place depends on merges made elsewhere in the text.
    """
    import random

    r = random.Random(seed)
    pieces: dict[str, tuple[float, int]] = {c: (-100.0, NORMAL) for c in "abcd\u2581"}
    for _ in range(12):
        text = "".join(r.choice("abcd") for _ in range(r.randint(2, 4)))
        pieces[text] = (float(r.randint(-5, 0)), r.choice([NORMAL, NORMAL, UNUSED]))
    return build(path, [(p, s, t) for p, (s, t) in pieces.items()])
