"""Which tokenizer.json files are Llama 2 style, and the family built from one
(tokenline.core.hfbpe).

Interpreted: runs once per model, through the file's JSON and the untyped `tokenizers` bindings.
"""

from __future__ import annotations

from typing import Any

from tokenline.core.addedmatch import FIRST, SECOND, AddedMatcher, AddedTokens, is_white
from tokenline.core.hfbpe import HFBPEFamily
from tokenline.core.segments import Segmenter
from tokenline.core.spsegments import WhitespaceSegmenter
from tokenline.core.stretchlayout import ALWAYS, FIRST_ONLY, NEVER, NO_METASPACE, StretchRules
from tokenline.core.vocab import Vocabulary

SCHEMES = {"always": ALWAYS, "first": FIRST_ONLY, "never": NEVER}
# Why a Llama 2 style file is not cut into windows (the ends of "re-encode whole unless").
NOT_WINDOWS = {
    "model": "Llama 2 style BPE without dropout, word prefixes or suffixes, or ignore_merges",
    "single_word": "Llama 2 style with no added token matched as a single word",
    "added": (
        "Llama 2 style with added tokens that hold no white space and no marker (a normalized "
        "one may start with the marker its normalizer prepends, where no Metaspace prepends)"
    ),
}


def llama_rules(spec: dict[str, Any], tok: Any) -> tuple[StretchRules | None, str]:
    """The stretch rules of a Llama 2 style BPE file: a normalizer of Prepend(marker) and
    Replace(" ", marker), or of Replace alone, or none; no pre-tokenizer or Metaspace without
    split; spaces escaped by one of them. Else None and why not (the end of "re-encode whole
    unless"), or "" for a file of another layout."""
    model = spec["model"]
    layout = _layout(spec) if model.get("type") == "BPE" else None
    if layout is None:
        return None, ""
    marker, prepend, replace, scheme = layout
    loose = ("dropout", "continuing_subword_prefix", "end_of_word_suffix", "ignore_merges")
    if any(model.get(key) for key in loose):
        return None, NOT_WINDOWS["model"]
    added = _added_tokens(tok, marker, scheme != NO_METASPACE)
    if isinstance(added, str):
        return None, added
    return StretchRules(marker, prepend, replace, scheme, added), ""


def _layout(spec: dict[str, Any]) -> tuple[str, bool, bool, int] | None:
    """(marker, Prepend, Replace, Metaspace scheme) of the normalizer and pre-tokenizer, or
    None when they are not Llama 2's."""
    markers: set[str] = set()
    prepend = replace = False
    norm = spec.get("normalizer")
    if norm is not None and not isinstance(norm, dict):
        return None
    members = (
        []
        if norm is None
        else (norm.get("normalizers") if norm.get("type") == "Sequence" else [norm])
    )
    for node in members or []:
        if not isinstance(node, dict):
            return None
        kind = node.get("type")
        if kind == "Prepend" and not prepend:
            prepend = True
            markers.add(str(node.get("prepend")))
        elif kind == "Replace" and node.get("pattern") == {"String": " "} and not replace:
            replace = True
            markers.add(str(node.get("content")))
        else:
            return None
    scheme = NO_METASPACE
    pre = spec.get("pre_tokenizer")
    if pre is not None:
        if not isinstance(pre, dict) or pre.get("type") != "Metaspace" or pre.get("split", True):
            return None
        markers.add(pre.get("replacement", "\u2581"))
        scheme = SCHEMES.get(pre.get("prepend_scheme", "always"), NEVER)
        if pre.get("add_prefix_space") is False:
            scheme = NEVER
    if len(markers) != 1 or not (replace or scheme != NO_METASPACE):
        return None
    marker = markers.pop()
    if not isinstance(marker, str) or len(marker) != 1 or is_white(marker):
        return None
    return marker, prepend, replace, scheme


def _added_tokens(tok: Any, marker: str, metaspace: bool) -> AddedTokens | str:
    """The file's added tokens in their two passes, or why they cannot be found in windows:
    one matched as a single word (it looks at the characters beside it), or contents that hold
    white space or the marker where the first pass finds them in normalized text."""
    passes: dict[int, tuple[list[str], list[int], list[bool], list[bool]]] = {
        FIRST: ([], [], [], []),
        SECOND: ([], [], [], []),
    }
    for token_id, a in sorted(tok.get_added_tokens_decoder().items()):
        if a.single_word:
            return NOT_WINDOWS["single_word"]
        content: str = a.content
        if a.normalized and tok.normalizer is not None:
            content = tok.normalizer.normalize_str(content)
        if a.normalized:
            # Found in normalized stretches: a marker the normalizer put is fine, but not one
            # Metaspace puts after them, nor a content of markers only.
            bad = content == marker * len(content) or (metaspace and marker in content)
        else:
            bad = marker in content
        if not content or bad or any(is_white(c) for c in content):
            return NOT_WINDOWS["added"]
        contents, ids, lstrip, rstrip = passes[SECOND if a.normalized else FIRST]
        contents.append(content)
        ids.append(token_id)
        lstrip.append(bool(a.lstrip))
        rstrip.append(bool(a.rstrip))
    first = AddedMatcher(*passes[FIRST], FIRST)
    second = AddedMatcher(*passes[SECOND], SECOND)
    return AddedTokens(first, second)


def llama_family(
    tok: Any, spec: dict[str, Any], vocab: Vocabulary, rules: StretchRules
) -> HFBPEFamily:
    """The family of a file llama_rules accepts."""
    family = HFBPEFamily(vocab, tok, rules)
    family.added = set(tok.get_added_tokens_decoder())
    model = spec["model"]
    pieces: dict[str, int] = model.get("vocab") or {}
    unk = model.get("unk_token")
    family.unk = pieces.get(unk, -1) if isinstance(unk, str) else -1
    family.fuse_unk = bool(model.get("fuse_unk"))
    family.byte_fallback = bool(model.get("byte_fallback"))
    family.singles = {p for p in pieces if len(p) == 1}
    family.byte_pieces = {b for b in range(256) if f"<0x{b:02X}>" in pieces}
    # A model with no unknown token and no byte for every character drops some: a segment of
    # those only would have no token to hold it.
    drops = family.unk < 0 and not (family.byte_fallback and len(family.byte_pieces) == 256)
    family.segmenter = None if drops else _segments(pieces, rules)
    return family


def _segments(pieces: dict[str, int], rules: StretchRules) -> Segmenter | None:
    """Segments that begin at a marker after another character, when no piece and no
    normalized added token holds one there (so no merge and no match crosses them) and the
    marker is a piece (so no run of unknown characters does)."""
    cut = WhitespaceSegmenter(rules.marker, False)
    if rules.marker not in pieces:
        return None
    texts = [*pieces, *rules.added.second.ids]
    for text in texts:
        if any(cut.cut_between(text[i - 1], text[i]) for i in range(1, len(text))):
            return None
    return cut
