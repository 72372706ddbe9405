"""Trains a small Llama on English prose and records its held-out perplexity and a greedy run.

Corpus: the licence texts Debian ships in /usr/share/common-licenses (GPL, LGPL, GFDL, MPL,
Artistic, BSD, CC0: real English prose, each licence's own terms allow verbatim copies). The Apache
License 2.0 is held out whole: committed as trained-llama-heldout.txt, never seen in training.
Tokenizer: a byte-level BPE of 2048 ids trained with `tokenizers` on the training texts.
Model: LlamaForCausalLM, hidden 192, 4 layers, 6 heads, intermediate 512, context 256, tied
embeddings (about 2.2M parameters), trained from seed 0 for a fixed number of steps on CPU, saved
in float16 safetensors under trained-llama/.

Records in expected/trained-llama.json: the held-out token ids (the first HELDOUT_WINDOWS windows
of 256 tokens), the mean negative log-likelihood and perplexity transformers computes over them
(float32 computation over the saved float16 weights, as our engine computes), and greedy ids from
an English prompt (float32 over the same weights).

Run from the repository root: python3 devtools/reference/train_small_llama.py  (about 5 minutes
on 2 cores).

DRAFT=1 trains the speculative-decoding draft of that model the same way (same corpus, steps, seed and
optimizer) at a fraction of its size (hidden 96, 2 layers, 3 heads, intermediate 256: about 0.4M
parameters), with trained-llama's own tokenizer (loaded, not retrained, so the ids are the same), into
trained-llama-draft/, recording its held-out perplexity in expected/trained-llama-draft.json; it leaves
trained-llama/ and its records untouched. Torch's CPU kernels need not give the same bits on another machine, so the checkpoint is
committed and the tests read it.
"""

import json
import math
import os
import sys
import time

# This folder's tokenizers.py would shadow the tokenizers package.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

import torch  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

HERE = os.path.dirname(os.path.abspath(__file__))
DRAFT = os.environ.get("DRAFT") == "1"
TARGET = os.path.join(HERE, "trained-llama")
OUT = os.path.join(HERE, "trained-llama-draft" if DRAFT else "trained-llama")
HELDOUT_FILE = os.path.join(HERE, "trained-llama-heldout.txt")
EXPECTED = os.path.join(HERE, "expected", "trained-llama-draft.json" if DRAFT else "trained-llama.json")
SIZE = (dict(hidden_size=96, intermediate_size=256, num_hidden_layers=2, num_attention_heads=3, num_key_value_heads=3)
        if DRAFT else
        dict(hidden_size=192, intermediate_size=512, num_hidden_layers=4, num_attention_heads=6, num_key_value_heads=6))
LICENSES = "/usr/share/common-licenses"
HELDOUT = "Apache-2.0"
TRAIN = ["GPL-1", "GPL-2", "GPL-3", "LGPL-2", "LGPL-2.1", "LGPL-3", "GFDL-1.2", "GFDL-1.3",
         "MPL-1.1", "MPL-2.0", "Artistic", "BSD", "CC0-1.0"]
VOCAB = 2048
CONTEXT = 256
HELDOUT_WINDOWS = 4
STEPS = int(os.environ.get("STEPS", "400"))
BATCH = 16
PROMPT = "This License applies to any program or other work which"
NEW_TOKENS = 24


def read(name):
    with open(os.path.join(LICENSES, name), encoding="utf-8") as f:
        return f.read()


def train_tokenizer(texts):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>")


def windows(ids, n):
    return [ids[i * CONTEXT:(i + 1) * CONTEXT] for i in range(n)]


def mean_nll(model, chunks):
    total, count = 0.0, 0
    with torch.no_grad():
        for chunk in chunks:
            x = torch.tensor([chunk])
            logp = torch.log_softmax(model(x).logits[0, :-1].double(), dim=-1)
            total += -logp.gather(1, x[0, 1:, None]).sum().item()
            count += len(chunk) - 1
    return total / count


def main():
    torch.manual_seed(0)
    torch.set_num_threads(int(os.environ.get("THREADS", "2")))
    texts = [read(n) for n in TRAIN]
    heldout = read(HELDOUT)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(TARGET) if DRAFT else train_tokenizer(texts)
    eot = tokenizer.eos_token_id
    train_ids = []
    for t in texts:
        train_ids += tokenizer(t)["input_ids"] + [eot]
    heldout_ids = tokenizer(heldout)["input_ids"]
    if len(heldout_ids) < HELDOUT_WINDOWS * CONTEXT:
        sys.exit("held-out text too short")
    print(f"training tokens {len(train_ids)}, held-out tokens {len(heldout_ids)}", flush=True)

    config = LlamaConfig(vocab_size=VOCAB, **SIZE, max_position_embeddings=CONTEXT,
                         rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=True,
                         bos_token_id=eot, eos_token_id=eot)
    model = LlamaForCausalLM(config)
    print(f"parameters {sum(p.numel() for p in model.parameters())}", flush=True)
    data = torch.tensor(train_ids)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1, betas=(0.9, 0.95))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=STEPS, pct_start=0.05)
    gen = torch.Generator().manual_seed(0)
    start = time.time()
    model.train()
    for step in range(STEPS):
        starts = torch.randint(0, len(data) - CONTEXT - 1, (BATCH,), generator=gen)
        x = torch.stack([data[s:s + CONTEXT] for s in starts])
        loss = model(x, labels=x).loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 50 == 0 or step == STEPS - 1:
            print(f"step {step} loss {loss.item():.3f} {time.time() - start:.0f}s", flush=True)

    model.eval()
    model.half().save_pretrained(OUT, safe_serialization=True)
    tokenizer.save_pretrained(OUT)
    if not DRAFT:
        with open(HELDOUT_FILE, "w", encoding="utf-8") as f:
            f.write(heldout)

    # Reload as a user would, and compute in float32 over the saved float16 weights.
    model = LlamaForCausalLM.from_pretrained(OUT, dtype=torch.float32).eval()
    tokenizer = PreTrainedTokenizerFast.from_pretrained(OUT)
    assert tokenizer(heldout)["input_ids"] == heldout_ids
    chunks = windows(heldout_ids, HELDOUT_WINDOWS)
    nll = mean_nll(model, chunks)
    prompt_ids = tokenizer(PROMPT)["input_ids"]
    with torch.no_grad():
        out = model.generate(torch.tensor([prompt_ids]), max_new_tokens=NEW_TOKENS, do_sample=False,
                             eos_token_id=None, pad_token_id=eot)
    output_ids = out[0, len(prompt_ids):].tolist()
    record = {
        "corpus": f"{LICENSES}: train {TRAIN}, held out {HELDOUT}",
        "steps": STEPS,
        "context": CONTEXT,
        "heldout_windows": [len(c) for c in chunks],
        "heldout_ids": chunks,
        "heldout_mean_nll": nll,
        "heldout_perplexity": math.exp(nll),
        "prompt": PROMPT,
        "prompt_ids": prompt_ids,
        "output_ids": output_ids,
        "output_text": tokenizer.decode(output_ids),
    }
    with open(EXPECTED, "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    print(f"held-out perplexity {math.exp(nll):.4f}; greedy: {record['output_text']!r}")


if __name__ == "__main__":
    main()
