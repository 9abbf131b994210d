"""`tokenline count --model FILE` with real tokenizer files (tests/data/tokenizers), as a user
names them: an old untyped tokenizer.json, a `.tiktoken` rank file, a folder, a Tekken file under
another name, and a rank file Tokenline cannot know."""

from __future__ import annotations

from pathlib import Path

import tiktoken
from tiktoken_ext import openai_public
from tokenizers import Tokenizer

from tests.conftest import ROOT, tekken_path
from tests.core.test_real_files import _ranks

from .test_cli import tokenline

CORPUS = ROOT / "tests" / "data" / "tokenizers"
TEXT = "Counting real files: naïve café, 漢字 😀, e\u0301.\n  Second line\tends here.\n"


def count_of(result_stdout: str) -> int:
    return int(result_stdout.split()[0].replace(",", ""))


def hf_count(path: Path, text: str) -> int:
    return len(Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False).ids)


def test_an_untyped_tokenizer_json_and_its_folder(tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.md"
    prompt.write_text(TEXT, encoding="utf-8")
    bert = CORPUS / "bert-base-uncased" / "tokenizer.json"
    for spec in (str(bert), str(bert.parent)):
        result = tokenline("count", "--model", spec, str(prompt))
        assert result.returncode == 0, result.stderr
        assert count_of(result.stdout) == hf_count(bert, TEXT)
    phi3 = CORPUS / "phi-3-mini"
    result = tokenline("count", "--json", "--model", str(phi3), str(prompt))
    assert result.returncode == 0, result.stderr
    assert f'"tokens": {hf_count(phi3 / "tokenizer.json", TEXT)},' in result.stdout
    assert '"model": "phi-3-mini"' in result.stdout


def test_a_tiktoken_file_is_its_encoding(tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.md"
    prompt.write_text(TEXT, encoding="utf-8")
    path = CORPUS / "whisper" / "gpt2.tiktoken"
    enc = tiktoken.Encoding(
        "r50k", pat_str=openai_public.r50k_pat_str, mergeable_ranks=_ranks(path), special_tokens={}
    )
    result = tokenline("count", "--json", "--model", str(path), str(prompt))
    assert result.returncode == 0, result.stderr
    assert f'"tokens": {len(enc.encode_ordinary(TEXT))},' in result.stdout
    assert '"model": "r50k_base"' in result.stdout


def test_a_tekken_file_under_any_name(tmp_path: Path) -> None:
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    tekken = tekken_path()
    expected = len(Tekkenizer.from_file(str(tekken)).encode(TEXT, bos=False, eos=False))
    prompt = tmp_path / "prompt.md"
    prompt.write_text(TEXT, encoding="utf-8")
    for name in ("Tekken_240911.json", "mytok.json"):
        (tmp_path / name).symlink_to(tekken)
        result = tokenline("count", "--model", str(tmp_path / name), str(prompt))
        assert result.returncode == 0, result.stderr
        assert count_of(result.stdout) == expected, name


def test_an_unknown_rank_file_is_refused_clearly(tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.md"
    prompt.write_text(TEXT, encoding="utf-8")
    unknown = CORPUS / "torchtune-tiktoken-small" / "tokenizer.model"
    result = tokenline("count", "--model", str(unknown), str(prompt))
    assert result.returncode == 3
    assert "tiktoken rank file (2,000 ranks)" in result.stderr
    assert "o200k_base" in result.stderr and "Llama 3" in result.stderr
