#!/usr/bin/env bash
# What session 49 runs on the GPU (after `scripts/device-bundle.sh --slim`; carry .device).
# Every peer figure comes from the same process and rounds (bench/benchlib.py's interleaved).
#   bash bench/gpu-session49.sh first OUTDIR  on an H200 issue 14's table (gpu-session47.sh
#     attn); on any other GPU the GPU e2e lit suite and python/tests/test_gpu.py (e2e), which
#     session 48's changes (turns, bits, the f32 heuristic) have not run
#   bash bench/gpu-session49.sh ATTN|MM|E2E|... OUTDIR  session 47's modes (gpu-session47.sh)
source bench/session-start.sh "gpu-session49.sh first|<gpu-session47.sh's modes> OUTDIR" "$@"
if [ "$mode" = first ]; then
  if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    exec bash bench/gpu-session47.sh attn "$out"
  fi
  exec bash bench/gpu-session47.sh e2e "$out"
fi
exec bash bench/gpu-session47.sh "$mode" "$out"
