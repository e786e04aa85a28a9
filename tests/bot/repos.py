"""Two versions of a small fine-tuning repository: the PR's head checkpoints every step (a regression)."""

from __future__ import annotations

TRAIN = '''\
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments

from data import build_dataset


def main():
    model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf", attn_implementation="flash_attention_2")
    tokenizer = AutoTokenizer.from_pretrained("meta-llama/Llama-2-7b-hf")
    args = TrainingArguments(
        output_dir="out",
        per_device_train_batch_size=4,
        gradient_accumulation_steps=8,
        learning_rate=2e-5,
        lr_scheduler_type="cosine",
        warmup_ratio=0.03,
        bf16={bf16},
        gradient_checkpointing=True,
        dataloader_num_workers=8,
        dataloader_pin_memory=True,
        logging_steps=10,
        save_steps={save_steps},
    )
    trainer = Trainer(model=model, args=args, train_dataset=build_dataset(tokenizer), tokenizer=tokenizer)
    trainer.train()


if __name__ == "__main__":
    main()
'''

DATA = '''\
from datasets import load_dataset


def build_dataset(tokenizer):
    ds = load_dataset("json", data_files="data/train.jsonl")["train"]
    return ds.map(lambda ex: tokenizer(ex["text"], truncation=True, max_length=2048), batched=True, num_proc=8)
'''

REQS = "torch==2.3.1\ntransformers==4.44.0\ndatasets==2.20.0\nflash-attn==2.6.3\n"


def files(save_steps: int = 500, bf16: bool = True) -> dict[str, str]:
    train = TRAIN.replace("{save_steps}", str(save_steps)).replace("{bf16}", str(bf16))
    return {"train.py": train, "data.py": DATA, "requirements.txt": REQS}


BASE = files(500, True)
HEAD = files(1, False)  # the PR turns bf16 off and checkpoints every step
BF16_LINE = HEAD["train.py"].splitlines().index("        bf16=False,") + 1
