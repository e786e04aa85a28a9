#!/bin/bash
python train.py --config config.yaml
