"""A zoo of generated SentencePiece BPE models: seed -> ModelProto, deterministic.

Hand-built models catch one trap each; this generator makes thousands of small vocabularies in
which the traps meet: UNUSED pieces that merges reach (formable one way or several, inside larger
pieces, made of UNUSED pieces), tied scores, byte fallback, pieces with "▁" at either end or
inside, dummy prefix on or off, whitespace as suffix, user-defined and control pieces,
remove_extra_whitespaces and real normalizers. Alphabets are tiny ("ab▁" plus a few), so merges
collide and a window edge lands in every odd place.

`classify()` reads a model back and names what it contains, so a test can prove that the zoo
still reaches every class.
"""

from __future__ import annotations

import functools
import hashlib
import io
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sentencepiece as spm

from tests.core import modelkit
from tests.core.modelkit import BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED

SP = "\u2581"
EXTRA_CHARS = "cdxé"  # é is two UTF-8 bytes: re-split out of an UNUSED piece it can fall back
# Characters outside every alphabet, or ones a normalizer rewrites into the alphabet.
OUTSIDE = [
    "☃",
    "😀",
    "\t",
    "\n",
    "  ",
    "\u3000",
    "ａ",
    "ｂ",
    "Ａ",
    "ﬁ",
    "e\u0301",
    "\u200b",
    SP,
    "<s>",
    "<c>",
    "@",
]
# Rules over the alphabet for the "rules" normalizer: several characters, growing and shrinking.
RULES = [
    ("aab", "b"),
    ("ba", "ab"),
    ("ca", "a b"),
    ("bbb", ""),
    ("d", "dd"),
    ("  ", " "),
    ("ａ", "a"),  # as NFKC does, in the small
    ("ｂ", "b"),
    ("ﬁ", "fi"),
    ("e\u0301", "é"),
]

# Every class the generator must reach (see classify()).
CLASSES = (
    "unused-formable-once",
    "unused-formable-many",
    "unused-unreachable",
    "unused-in-larger-piece",
    "unused-of-unused",
    "unused-single-char",
    "unused-with-unknown-char",
    "tied-scores",
    "byte-fallback",
    "no-byte-fallback",
    "missing-char",
    "user-defined",
    "user-defined-single-char",
    "control",
    "control-as-text",
    "ws-prefix-pieces",
    "ws-inside-pieces",
    "ws-suffix-pieces",
    "ws-only-pieces",
    "dummy-prefix",
    "no-dummy-prefix",
    "whitespace-as-suffix",
    "remove-extra-whitespaces",
    "nmt-nfkc",
    "custom-rules",
    "no-escape-whitespaces",
)


@dataclass(frozen=True)
class ZooModel:
    seed: int
    proto: bytes
    # What to type into documents: single characters, piece texts, outside characters.
    fragments: tuple[str, ...]

    def write(self, directory: Path) -> Path:
        """The model file for this seed in directory (written once, then reused)."""
        digest = hashlib.sha1(self.proto).hexdigest()[:12]
        path = directory / f"zoo-{self.seed}-{digest}.model"
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(self.proto)
            tmp.replace(path)
        return path


@functools.cache
def charsmap(name: str) -> bytes:
    """The precompiled_charsmap of a real normalizer ("nmt_nfkc" or "rules"), from a tiny model
    trained in memory: the generator copies it into models it builds."""
    corpus = ["ab ab aab ba abc dd ﬁ ① Ｈ ａｂ", "a b c d x é", "the quick brown fox"] * 20
    options: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if name == "rules":
            tsv = Path(tmp) / "rules.tsv"
            rows = [
                " ".join(f"{ord(c):X}" for c in s) + "\t" + " ".join(f"{ord(c):X}" for c in t)
                for s, t in RULES
            ]
            tsv.write_text("\n".join(rows) + "\n", encoding="utf-8")
            options["normalization_rule_tsv"] = str(tsv)
        else:
            options["normalization_rule_name"] = name
        out = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(corpus),
            model_writer=out,
            vocab_size=30,
            hard_vocab_limit=False,
            model_type="bpe",
            minloglevel=2,
            num_threads=1,
            **options,
        )
    proto = modelkit.pb2().ModelProto()
    proto.ParseFromString(out.getvalue())
    blob: bytes = proto.normalizer_spec.precompiled_charsmap
    assert blob, f"training with {name} gave no charsmap"
    return blob


def _ws_ok(piece: str, mode: str) -> bool:
    """Where "▁" may sit in a multi-character piece under the model's whitespace mode."""
    if SP not in piece or len(piece) == 1:
        return True
    if mode == "inside":
        return True
    if mode == "none":
        return False
    body = piece.lstrip(SP) if mode == "prefix" else piece.rstrip(SP)
    return SP not in body


def generate(seed: int) -> ZooModel:
    """The zoo model of this seed. Same seed, same bytes."""
    r = random.Random(seed)
    extra = "".join(r.sample(EXTRA_CHARS, r.choice([0, 0, 1, 1, 2, 3])))
    alphabet = "ab" + extra + SP
    missing = {c for c in extra if r.random() < 0.3}
    ws_mode = r.choice(["prefix", "prefix", "inside", "suffix", "none"])
    score_mode = r.choice(["ordered", "random", "tied", "tied"])
    unused_rate = r.choice([0.0, 0.15, 0.3, 0.3, 0.5])
    max_len = r.choice([3, 4, 5, 6, 8])

    pieces: dict[str, tuple[float, int]] = {}
    for c in alphabet:
        if c not in missing:
            kind = UNUSED if r.random() < 0.04 else NORMAL
            pieces[c] = (-100.0 - r.randint(0, 3), kind)
    # What merges can join: characters and merged pieces. Sometimes one extra character is an
    # UNUSED piece no merge touches (SentencePiece emits it as <unk>).
    symbols = list(alphabet)
    present = [c for c in extra if c not in missing]
    if present and r.random() < 0.2:
        isolated = r.choice(present)
        pieces[isolated] = (-100.0, UNUSED)
        symbols.remove(isolated)
    unused: list[str] = []
    merges = r.randint(3, 28)
    made = 0
    for _ in range(400):
        if made >= merges:
            break
        pool = unused if unused and r.random() < 0.3 else symbols
        left = r.choice(pool)
        right = r.choice(unused if unused and r.random() < 0.2 else symbols)
        new = left + right
        if len(new) > max_len or new in pieces or not _ws_ok(new, ws_mode):
            continue
        kind = UNUSED if r.random() < unused_rate else NORMAL
        # Mostly keep UNUSED pieces formable one way: a piece formed several ways makes the core
        # re-encode whole, and the window rule is what the zoo is for.
        one_way = r.random() < 0.8
        if one_way and kind == UNUSED and len(_splits(new, _kinds(pieces))) > 1:
            kind = NORMAL
        if one_way and _adds_split(new, pieces):
            continue
        if score_mode == "ordered":
            score = -float(made)
        elif score_mode == "random":
            score = round(r.uniform(-10.0, 0.0), 2)
        else:
            score = float(-r.randint(1, 3))
        pieces[new] = (score, kind)
        symbols.append(new)
        if kind == UNUSED:
            unused.append(new)
        made += 1
    # Pieces no pair of pieces forms (they exist in real files, and may still be reached).
    for _ in range(r.choice([0, 0, 1, 3])):
        junk = "".join(r.choice(alphabet) for _ in range(r.randint(2, 4)))
        if junk not in pieces and _ws_ok(junk, ws_mode):
            pieces[junk] = (float(-r.randint(0, 5)), r.choice([NORMAL, UNUSED]))

    specials: list[str] = []
    if r.random() < 0.3:
        for _ in range(r.randint(1, 3)):
            u = "".join(r.choice(alphabet.replace(SP, "")) for _ in range(r.randint(1, 4)))
            if len(u) == 1:
                pieces.pop(u, None)  # a character made user-defined is never merged
            if u not in pieces and u not in specials:
                specials.append(u)
    rows = [(p, s, t) for p, (s, t) in pieces.items()]
    rows += [(u, 0.0, USER_DEFINED) for u in specials]
    if r.random() < 0.3:
        controls = ["<c>"]
        typed = "".join(r.choice("ab") for _ in range(r.randint(1, 3)))
        if typed not in pieces and typed not in specials:
            controls.append(typed)  # a control piece whose text is typed as ordinary text
        for c in controls:
            rows.append((c, 0.0, CONTROL))
            specials.append(c)

    byte_fallback = r.random() < 0.4
    # nmt_nfkc is the real thing, but its 240 KB charsmap costs the core ~0.2 s to load.
    normalizer = r.choice(["identity"] * 7 + ["nmt_nfkc"] + ["rules"] * 2)
    as_suffix = r.random() < (0.7 if ws_mode == "suffix" else 0.1)
    proto = modelkit.pb2().ModelProto()
    proto.ParseFromString(
        modelkit.build_bytes(
            rows,
            byte_fallback=byte_fallback,
            add_dummy_prefix=r.random() < 0.7,
            remove_extra_whitespaces=r.random() < 0.35,
            treat_whitespace_as_suffix=as_suffix,
            escape_whitespaces=r.random() < 0.95,
            normalizer=normalizer,
            precompiled_charsmap=b"" if normalizer == "identity" else charsmap(normalizer),
        )
    )

    typed_pieces = [p.replace(SP, " ") for p in pieces if len(p) > 1]
    fragments = [*(c.replace(SP, " ") for c in alphabet), *typed_pieces, *specials, *OUTSIDE]
    return ZooModel(seed, proto.SerializeToString(), tuple(fragments))


def _kinds(pieces: dict[str, tuple[float, int]]) -> dict[str, int]:
    return {p: t for p, (_, t) in pieces.items()}


def _adds_split(new: str, pieces: dict[str, tuple[float, int]]) -> bool:
    """Whether adding piece new gives some UNUSED piece a second way to be formed."""
    kinds = _kinds(pieces)
    after = {**kinds, new: NORMAL}
    return any(
        t == UNUSED and new in u and len(_splits(u, after)) > max(1, len(_splits(u, kinds)))
        for u, t in kinds.items()
    )


def _splits(piece: str, formable: dict[str, int]) -> list[tuple[str, str]]:
    """The pairs a merge could form piece from (parts: one character or a mergeable piece)."""

    def ok(s: str) -> bool:
        return len(s) == 1 or formable.get(s) in (NORMAL, UNUSED)

    return [(piece[:i], piece[i:]) for i in range(1, len(piece)) if ok(piece[:i]) and ok(piece[i:])]


def classify(proto_bytes: bytes) -> frozenset[str]:
    """What a model contains, as names from CLASSES (read from the proto, not the generator)."""
    proto = modelkit.pb2().ModelProto()
    proto.ParseFromString(proto_bytes)
    out: set[str] = set()
    kinds: dict[str, int] = {}
    scores: dict[str, float] = {}
    for p in proto.pieces:
        kinds[p.piece] = p.type
        scores[p.piece] = p.score
    mergeable = {s: t for s, t in kinds.items() if t in (NORMAL, UNUSED)}
    singles = {s for s in kinds if len(s) == 1 and kinds[s] != BYTE}
    formed = {s for s in mergeable if len(s) > 1 and _splits(s, mergeable)}
    for s in mergeable:
        if kinds[s] != UNUSED:
            continue
        if len(s) == 1:
            out.add("unused-single-char")
            continue
        splits = _splits(s, mergeable)
        out.add(
            ["unused-unreachable", "unused-formable-once"][len(splits)]
            if len(splits) < 2
            else "unused-formable-many"
        )
        if any(kinds.get(part) == UNUSED for split in splits for part in split):
            out.add("unused-of-unused")
        if splits and any(c not in singles for c in s):
            out.add("unused-with-unknown-char")
    for s in formed:
        if any(
            kinds.get(part) == UNUSED and len(part) > 1
            for sp in _splits(s, mergeable)
            for part in sp
        ):
            out.add("unused-in-larger-piece")
    formed_scores = [scores[s] for s in formed]
    if len(set(formed_scores)) < len(formed_scores):
        out.add("tied-scores")
    ts, ns = proto.trainer_spec, proto.normalizer_spec
    out.add("byte-fallback" if ts.byte_fallback else "no-byte-fallback")
    letters = {c for s in mergeable for c in s}
    if letters - singles:
        out.add("missing-char")
    for s, t in kinds.items():
        if t == USER_DEFINED:
            out.add("user-defined-single-char" if len(s) == 1 else "user-defined")
        elif t == CONTROL and s not in ("<s>", "</s>"):
            out.add("control-as-text" if set(s) <= letters else "control")
    for s in mergeable:
        if len(s) < 2 or SP not in s:
            continue
        core = s.strip(SP)
        if not core:
            out.add("ws-only-pieces")
        elif SP in core:
            out.add("ws-inside-pieces")
        else:
            if s.startswith(SP):
                out.add("ws-prefix-pieces")
            if s.endswith(SP):
                out.add("ws-suffix-pieces")
    out.add("dummy-prefix" if ns.add_dummy_prefix else "no-dummy-prefix")
    if ts.treat_whitespace_as_suffix:
        out.add("whitespace-as-suffix")
    if ns.remove_extra_whitespaces:
        out.add("remove-extra-whitespaces")
    if ns.precompiled_charsmap:
        out.add("nmt-nfkc" if ns.name == "nmt_nfkc" else "custom-rules")
    if not ns.escape_whitespaces:
        out.add("no-escape-whitespaces")
    assert UNKNOWN in kinds.values()
    return frozenset(out)
