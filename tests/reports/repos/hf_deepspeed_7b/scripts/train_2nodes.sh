#!/bin/bash
# 2 nodes x 8 GPUs
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_1
export NCCL_NET_GDR_LEVEL=2
torchrun --nnodes 2 --nproc_per_node 8 --master_addr $MASTER_ADDR --master_port 29500 \
  train.py configs/sft_llama7b.yaml
