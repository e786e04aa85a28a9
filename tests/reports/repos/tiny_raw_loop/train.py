"""Train a ~124M GPT from scratch with a plain PyTorch loop on a single GPU."""

import argparse

import numpy as np
import torch
import yaml
from model import GPT, GPTConfig
from torch.utils.data import DataLoader, Dataset


class TokenDataset(Dataset):
    def __init__(self, path, block_size):
        self.data = np.load(path)
        self.block_size = block_size

    def __len__(self):
        return len(self.data) - self.block_size - 1

    def __getitem__(self, i):
        x = torch.from_numpy(self.data[i : i + self.block_size].astype(np.int64))
        y = torch.from_numpy(self.data[i + 1 : i + 1 + self.block_size].astype(np.int64))
        return x, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default="config.yaml")
    args = p.parse_args()
    cfg = yaml.safe_load(open(args.config))
    model = GPT(GPTConfig(**cfg["model"])).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["train"]["lr"])
    loader = DataLoader(TokenDataset("data/train.npy", cfg["model"]["block_size"]), batch_size=16, shuffle=True, num_workers=0)
    step = 0
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        _logits, loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % cfg["train"]["log_interval"] == 0:
            print(f"step {step} loss {loss.item():.4f}")
        step += 1


if __name__ == "__main__":
    main()
