"""SentencePiece's precompiled normalization rules (nmt_nfkc, nfkc, custom TSV rules).

The blob is <trie size: u32 LE><Darts-clone double-array trie><NUL-terminated replacements>. The
normalizer cuts text at the longest rule that matches (in UTF-8 bytes) and copies the replacement;
this walks the same trie, so the engine can re-normalize a few characters around an edit instead of
the whole document.
"""

from __future__ import annotations

from librt.vecs import append, vec
from mypy_extensions import i64

from tokenline.core.rope import utf8_width


class CharsmapError(ValueError):
    pass


class Charsmap:
    cells: vec[i64]
    pool: bytes
    cache: dict[i64, str]
    # Longest rule, in characters (a UTF-8 byte bound, enough for look-ahead).
    longest: i64

    def __init__(self, blob: bytes) -> None:
        if len(blob) <= 4:
            raise CharsmapError("the normalization rules (precompiled_charsmap) are truncated")
        size: i64 = int.from_bytes(blob[:4], "little")
        if size >= len(blob) or size % 4 != 0:
            raise CharsmapError("the normalization rules (precompiled_charsmap) are corrupt")
        cells = vec[i64](capacity=size // 4)
        pos: i64 = 4
        while pos < 4 + size:
            cells = append(cells, i64(int.from_bytes(blob[pos : pos + 4], "little")))
            pos += 4
        self.cells = cells
        self.pool = blob[4 + size :]
        self.cache = {}
        self.longest = _deepest_key(cells)

    def replacement(self, value: i64) -> str:
        got = self.cache.get(value)
        if got is not None:
            return got
        end = self.pool.find(b"\0", value)
        if end < 0:
            end = len(self.pool)
        out = self.pool[value:end].decode("utf-8", "replace")
        self.cache[value] = out
        return out

    def match(self, text: str, pos: i64, limit: i64) -> tuple[i64, i64]:
        """Longest rule at text[pos:limit]: (characters consumed, value), or (0, -1)."""
        cells = self.cells
        ncells: i64 = len(cells)
        node: i64 = _offset(cells[0])
        best_chars: i64 = 0
        best_value: i64 = -1
        i: i64 = pos
        while i < limit:
            cp: i64 = ord(text[i])
            # UTF-8 bytes of the character, fed one at a time.
            nbytes: i64 = utf8_width(cp)
            k: i64 = 0
            while k < nbytes:
                byte: i64
                if nbytes == 1:
                    byte = cp
                elif k == 0:
                    if nbytes == 2:
                        byte = 0xC0 | (cp >> 6)
                    elif nbytes == 3:
                        byte = 0xE0 | (cp >> 12)
                    else:
                        byte = 0xF0 | (cp >> 18)
                else:
                    byte = 0x80 | ((cp >> (6 * (nbytes - 1 - k))) & 0x3F)
                node ^= byte
                if node < 0 or node >= ncells:
                    return best_chars, best_value
                cell: i64 = cells[node]
                if (cell & 0x800000FF) != byte:
                    return best_chars, best_value
                node ^= _offset(cell)
                if (cell >> 8) & 1 and k == nbytes - 1:
                    if node < 0 or node >= ncells:
                        return best_chars, best_value
                    best_chars = i - pos + 1
                    best_value = cells[node] & 0x7FFFFFFF
                k += 1
            i += 1
        return best_chars, best_value


def _offset(cell: i64) -> i64:
    return (cell >> 10) << ((cell & (1 << 9)) >> 6)


def _deepest_key(cells: vec[i64]) -> i64:
    """Length in bytes of the longest rule: an upper bound on its characters."""
    n: i64 = len(cells)
    if n == 0:
        return 1
    deepest: i64 = 1
    nodes: list[i64] = [_offset(cells[0])]
    depths: list[i64] = [0]
    while nodes:
        base: i64 = nodes.pop()
        depth: i64 = depths.pop()
        label: i64 = 1
        while label < 256:
            child: i64 = base ^ label
            if child < n:
                cell: i64 = cells[child]
                if (cell & 0x800000FF) == label:
                    if (cell >> 8) & 1 and depth + 1 > deepest:
                        deepest = depth + 1
                    nodes.append(child ^ _offset(cell))
                    depths.append(depth + 1)
            label += 1
    return deepest
