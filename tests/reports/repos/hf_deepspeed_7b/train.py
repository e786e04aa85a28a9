"""Supervised fine-tuning of Llama-2-7B with the HF Trainer and DeepSpeed ZeRO-2."""

import sys
from dataclasses import dataclass, field

import transformers
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser, Trainer, TrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="meta-llama/Llama-2-7b-hf")


@dataclass
class DataArguments:
    data_path: str = field(default="data/train.jsonl")
    model_max_length: int = field(default=2048)


def tokenize(batch, tokenizer, max_len):
    return tokenizer(batch["text"], truncation=True, max_length=max_len)


def main():
    parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_yaml_file(sys.argv[1])
    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path)
    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    raw = load_dataset("json", data_files=data_args.data_path, split="train")
    train = raw.map(lambda b: tokenize(b, tokenizer, data_args.model_max_length), batched=True)
    collator = transformers.DataCollatorForSeq2Seq(tokenizer, padding=True)
    trainer = Trainer(model=model, args=training_args, train_dataset=train, data_collator=collator)
    trainer.train()
    trainer.save_model(training_args.output_dir)


if __name__ == "__main__":
    main()
