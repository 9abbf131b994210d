"""Loading the tokenizer.json layouts kept in step through a Unicode normalizer: byte-level BPE
after NFC, NFD, NFKC, NFKD, Lowercase or a Sequence of them (tokenline.core.hfnormbytelevel), and
WordLevel models (tokenline.core.hfwordlevel). Called by tokenline.core.hfloader.

Interpreted: runs once per model, through the untyped `tokenizers` bindings and the file's JSON.
"""

from __future__ import annotations

from typing import Any

from librt.vecs import vec
from mypy_extensions import u8

from tokenline.core.addedsplit import AddedSplit
from tokenline.core.hfbytelevel import HFCoder
from tokenline.core.hfnormbytelevel import AddedPreTokens, NormalizedByteLevelFamily
from tokenline.core.hfwordlevel import WORD_PRE_TOKENIZERS, WordLevelFamily
from tokenline.core.unicodesteps import FORMS, MAX_RAW, UnicodeSteps
from tokenline.core.vocab import Vocabulary

# Why a file is not kept in step through its normalizer (the ends of "re-encode whole unless").
NOT_NORMALIZER = (
    "byte-level with no normalizer, or NFC, NFD, NFKC, NFKD, Lowercase or a Sequence of them "
    "with at most one of the four forms"
)
NOT_RAW = (
    f"its added tokens matched before normalizing are at most {MAX_RAW} and no content's end "
    "begins another content or holds one"
)
NOT_LOOSE = "its added tokens are matched as written (no lstrip, rstrip, single_word)"
NOT_WORDS = (
    "WordLevel with an unknown token, after WhitespaceSplit, Whitespace or BERT's pre-tokenizer "
    "and no normalizer or one of "
    + NOT_NORMALIZER.removeprefix("byte-level with no normalizer, or ")
)


def unicode_forms(node: Any) -> list[str] | None:
    """The stages of a normalizer kept in step ([] for none), or None for any other."""
    if node is None:
        return []
    if not isinstance(node, dict):
        return None
    kind = node.get("type")
    members = node.get("normalizers") if kind == "Sequence" else [node]
    if not isinstance(members, list):
        return None
    forms: list[str] = []
    for member in members:
        form = member.get("type") if isinstance(member, dict) else None
        if form not in FORMS and form != "Lowercase":
            return None
        forms.append(form)
    return forms if sum(1 for f in forms if f in FORMS) <= 1 else None


def normalizer_problem(spec: dict[str, Any]) -> str:
    """Why a byte-level file's normalizer and added tokens cannot be kept in step ("" when they
    can)."""
    if unicode_forms(spec.get("normalizer")) is None:
        return NOT_NORMALIZER
    if unicode_forms(spec.get("normalizer")) and _raw_problem(spec):
        return NOT_RAW
    return ""


def _raw_contents(spec: dict[str, Any]) -> list[str]:
    return [
        a["content"]
        for a in spec.get("added_tokens") or []
        # tokenizers' default: special tokens are matched before normalizing.
        if isinstance(a, dict)
        and not a.get("normalized", not a.get("special", False))
        and a.get("content")
    ]


def _raw_problem(spec: dict[str, Any]) -> bool:
    """Whether the added tokens matched before normalizing are too many, or may overlap in some
    text (a content's proper suffix begins a content, or a content holds another)."""
    raw = _raw_contents(spec)
    if len(raw) > MAX_RAW:
        return True
    for a in raw:
        for b in raw:
            if a != b and a in b:
                return True
            if any(b.startswith(a[i:]) for i in range(1, len(a))):
                return True
    return False


def unicode_steps(tok: Any, spec: dict[str, Any]) -> UnicodeSteps:
    """The file's normalizer cut into steps, its added tokens matched before normalizing."""
    from tokenizers import normalizers

    forms = unicode_forms(spec.get("normalizer")) or []
    stages = [getattr(normalizers, form)() for form in forms]
    raw = [a.content for a in tok.get_added_tokens_decoder().values() if not a.normalized]
    return UnicodeSteps(tok.normalizer if forms else None, stages, forms, sorted(set(raw)))


def added_split(tok: Any, steps: UnicodeSteps) -> AddedSplit:
    """The file's added tokens: sentinels for those matched before normalizing, the others by
    their contents as the library normalizes them."""
    by_content: dict[str, int] = {}
    raw_ids = [0] * len(steps.raw)
    for token_id, added in sorted(tok.get_added_tokens_decoder().items()):
        content = added.content
        if not added.normalized and content in steps.raw_index:
            raw_ids[steps.raw_index[content]] = token_id
            continue
        if added.normalized and tok.normalizer is not None:
            content = tok.normalizer.normalize_str(content)
        by_content.setdefault(content, token_id)
    return AddedSplit(raw_ids, by_content)


def _loose(spec: dict[str, Any]) -> bool:
    loose = ("lstrip", "rstrip", "single_word")
    for a in spec.get("added_tokens") or []:
        if not isinstance(a, dict) or any(a.get(key) for key in loose) or not a.get("content"):
            return True
    return False


def byte_level(
    tok: Any,
    spec: dict[str, Any],
    vocab: Vocabulary,
    pattern: str,
    coder: HFCoder,
    added: vec[u8],
    run_class: int,
) -> NormalizedByteLevelFamily:
    """A byte-level family for a file whose normalizer hfloader._piece_pattern accepted."""
    steps = unicode_steps(tok, spec)
    split = added_split(tok, steps)
    family = NormalizedByteLevelFamily(
        vocab, coder, AddedPreTokens(pattern, tok.pre_tokenizer, split), added, steps
    )
    # A long run of letters holding an added token's content is not one pre-token.
    lettered = any(all(c.isalpha() or _mark(c) for c in content) for content in split.ids)
    family.use_runs(0 if lettered else run_class)
    return family


def _mark(c: str) -> bool:
    import unicodedata

    return unicodedata.category(c).startswith("M")


def word_level(tok: Any, spec: dict[str, Any], vocab: Vocabulary) -> tuple[Any, str]:
    """A WordLevel family edited by windows of whole words, or None and why not ("" for a
    model of another type)."""
    model = spec["model"]
    if model.get("type") != "WordLevel":
        return None, ""
    unk = model.get("unk_token")
    words: dict[str, int] = tok.get_vocab(with_added_tokens=False)
    pre = spec.get("pre_tokenizer")
    kind = pre.get("type") if isinstance(pre, dict) else None
    if not isinstance(unk, str) or unk not in words or kind not in WORD_PRE_TOKENIZERS:
        return None, NOT_WORDS
    if unicode_forms(spec.get("normalizer")) is None:
        return None, NOT_WORDS
    if _loose(spec):
        return None, NOT_LOOSE
    if _raw_problem(spec):
        return None, NOT_RAW
    steps = unicode_steps(tok, spec)
    split = added_split(tok, steps)
    family = WordLevelFamily(vocab, tok, steps, split, words, words[unk])
    return family, ""
