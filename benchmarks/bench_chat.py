"""Benchmark of billing a chat file's conversations, against transformers in the same run.

A generated JSONL file of N conversations (2 to 6 messages of Botchan's prose each, system,
user and assistant turns) is billed under a real chat template (tests/data/chat_templates) on a
committed tokenizer.json:
- tokenline cold: parse_chat, then ChatBiller.bill of every conversation with empty caches;
- transformers: apply_chat_template(messages) (render and encode) of every conversation, the
  reference (the messages already parsed: its time leaves JSON reading out);
- tokenline warm: every conversation billed again, unchanged (what an editor does after an edit
  elsewhere in the file);
- one edit: one message's content changed, its line re-parsed and its conversation re-billed.
Times are CPU time (runinfo.py), medians of --runs, interleaved.

    python benchmarks/bench_chat.py [--conversations 100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))


from tokenline.core import ChatBiller, load_model, parse_chat, parse_jsonl_line  # noqa: E402

PAIRS = (("qwen2.5", "gpt2"), ("phi-3-mini", "phi-3-mini"))


def conversations(n: int, seed: int = 7) -> list[dict[str, Any]]:
    text = (ROOT / "tests" / "data" / "botchan.txt").read_text("utf-8").split()
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        messages = [{"role": "system", "content": "You are a helpful assistant."}]
        for turn in range(rng.randint(1, 5)):
            start = rng.randrange(len(text) - 200)
            words = " ".join(text[start : start + rng.randint(5, 120)])
            messages.append({"role": "user" if turn % 2 == 0 else "assistant", "content": words})
        out.append({"messages": messages})
    return out


def folder(template: str, tokenizer: str) -> Path:
    """The pair in one folder, with only the special tokens the tokenizer has (as the tests do:
    transformers would add the others to the vocabulary)."""
    from tokenizers import Tokenizer

    where = Path(tempfile.mkdtemp(prefix="bench-chat-"))
    data = ROOT / "tests" / "data"
    source = data / "tokenizers" / tokenizer / "tokenizer.json"
    (where / "tokenizer.json").write_bytes(source.read_bytes())
    config = json.loads((data / "chat_templates" / template / "tokenizer_config.json").read_text())
    vocab = Tokenizer.from_file(str(source))
    for key in [k for k, v in config.items() if k.endswith("_token")]:
        value = config[key]
        if not isinstance(value, str) or vocab.token_to_id(value) is None:
            del config[key]
    (where / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
    return where


def timed(fn: Any) -> tuple[float, Any]:
    start = time.process_time()
    result = fn()
    return time.process_time() - start, result


def run_pair(
    template: str, tokenizer: str, records: list[dict[str, Any]], runs: int
) -> dict[str, Any]:
    from transformers import PreTrainedTokenizerFast

    where = folder(template, tokenizer)
    model = load_model(where)
    config = json.loads((where / "tokenizer_config.json").read_text("utf-8"))
    specials = {k: v for k, v in config.items() if k.endswith("_token") and isinstance(v, str)}
    reference = PreTrainedTokenizerFast(
        tokenizer_file=str(where / "tokenizer.json"),
        chat_template=config["chat_template"],
        **specials,
    )
    text = "\n".join(json.dumps(r) for r in records) + "\n"
    lines = text.split("\n")
    cold, ref, warm, edit = [], [], [], []
    for _ in range(runs):
        biller = ChatBiller.for_model(model)
        t, convs = timed(
            lambda b=biller: [
                b.bill([m.data for m in c.messages]) for c in parse_chat(text, "jsonl")
            ]
        )
        cold.append(t)
        t, counts = timed(
            lambda: [
                len(reference.apply_chat_template(r["messages"], return_dict=False))
                for r in records
            ]
        )
        ref.append(t)
        assert [b.tokens for b in convs] == counts, "a bill differs from transformers'"
        parsed = parse_chat(text, "jsonl")
        t, _ = timed(lambda b=biller, p=parsed: [b.bill([m.data for m in c.messages]) for c in p])
        warm.append(t)
        k = len(records) // 2
        edits = [lines[k].replace('"content": "', f'"content": "edit {i} ', 1) for i in range(5)]

        def one_edit(line: str, b: ChatBiller = biller, k: int = k) -> int:
            conv = parse_jsonl_line(line, 0, k)
            assert conv is not None
            return b.bill([m.data for m in conv.messages]).tokens

        edit.append(statistics.median(timed(lambda e=e: one_edit(e))[0] for e in edits))
    med = statistics.median
    return {
        "pair": f"{template} template + {tokenizer} tokenizer.json",
        "conversations": len(records),
        "tokenline_cold_s": med(cold),
        "transformers_s": med(ref),
        "cold_ratio": med(c / r for c, r in zip(cold, ref, strict=True)),
        "tokenline_warm_s": med(warm),
        "one_edit_ms": 1000 * med(edit),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    records = conversations(args.conversations)
    for template, tokenizer in PAIRS:
        print(json.dumps(run_pair(template, tokenizer, records, args.runs)), flush=True)


if __name__ == "__main__":
    main()
