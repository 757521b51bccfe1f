#!/usr/bin/env bash
# One device call (scripts/device/README.md says how to prepare it): the CUDA module against a real driver + GPU, and the CPU kernels' tests on the
# device host's CPU. Binaries were built on the dev machine (Debian 12); their Qt/OpenBLAS libraries
# travel in bundle.tar.xz.
exec > >(tee "$OUT/device_log.txt") 2>&1
set -x
REPO=$PWD
[ -e /work/main ] || { mkdir -p /work && ln -s "$REPO" /work/main; }
ls -la /work/main/build/bin
tar -C /tmp -xJf .devcarry/bundle.tar.xz
export LD_LIBRARY_PATH=/tmp/wb/libs:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib
export QT_QPA_PLATFORM=offscreen
nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
lscpu | grep -E "Model name|^CPU\(s\)|Flags" | cut -c1-400
ldconfig -p | grep -E "libcuda.so.1|libcudart.so.13|libcublas.so.13"
ldd /work/main/build/bin/libwb_cuda.so
echo "=== test_cuda_probe"
timeout 120 /tmp/wb/tests/test_cuda_probe -v2; echo "rc=$?"
echo "=== compute-sanitizer memcheck"
timeout 120 compute-sanitizer --tool memcheck /tmp/wb/tests/test_cuda_probe smoke_kernel_runs_on_a_device 2>&1 | tail -8
cuobjdump --list-elf /work/main/build/bin/libwb_cuda.so; cuobjdump --list-ptx /work/main/build/bin/libwb_cuda.so
echo "=== cli bench (backend choice on a GPU machine)"
CLI=/work/main/build/bin/llm-workbench-cli
timeout 60 $CLI init --preset tiny-llama --out /tmp/tiny && timeout 120 $CLI bench --model /tmp/tiny --prompt-tokens 32 --gen-tokens 16 --json; echo "rc=$?"
timeout 100 $CLI init --preset gpt2-124m --out /tmp/g2 --tokenizer resources/tokenizers/gpt2 && for th in 2 8 16; do timeout 120 $CLI bench --model /tmp/g2 --threads $th --prompt-tokens 128 --gen-tokens 64 --repetitions 3 --json; done; echo "rc=$?"
for t in test_portable_kernels test_avx2_kernels test_matmul_typed test_backend_ops test_gguf_quantized test_gguf_model test_llama_model test_generator; do
  echo "=== $t"; timeout 120 /tmp/wb/tests/$t 2>&1 | tail -25; echo "rc=${PIPESTATUS[0]}"
done
echo DONE
