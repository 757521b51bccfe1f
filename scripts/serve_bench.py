#!/usr/bin/env python3
"""Aggregate throughput and time to first token of an OpenAI-compatible server under concurrent streams.

For each concurrency N: N clients at once each send one /v1/completions request (temperature 0, a fixed
max_tokens, "ignore_eos": true so every reply has the same length; llama.cpp's llama-server and ours both honour
it), streamed, and the script records each request's time to the first token and the wall time of the whole
round. Aggregate tokens/s = N * max_tokens / wall time of the round. Standard library only.

    scripts/serve_bench.py --url http://127.0.0.1:8080 --streams 1,2,4,8 --max-tokens 64 [--key KEY] [--rounds 2]
"""
import argparse
import json
import statistics
import threading
import time
import urllib.request


def one_request(url, key, prompt, max_tokens, out):
    body = json.dumps({"prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "stream": True,
                       "ignore_eos": True}).encode()
    req = urllib.request.Request(url + "/v1/completions", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    if key:
        req.add_header("Authorization", "Bearer " + key)
    t0 = time.perf_counter()
    first = None
    events = 0
    with urllib.request.urlopen(req, timeout=600) as r:
        for line in r:
            if not line.startswith(b"data: ") or line.strip() == b"data: [DONE]":
                continue
            events += 1
            if first is None:
                first = time.perf_counter() - t0
    out.append({"ttft_s": first if first is not None else float("nan"), "events": events,
                "total_s": time.perf_counter() - t0})


def round_of(url, key, n, max_tokens, prompt):
    out = []
    threads = [threading.Thread(target=one_request, args=(url, key, prompt, max_tokens, out)) for _ in range(n)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return wall, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--key", default="")
    ap.add_argument("--streams", default="1,2,4,8")
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--prompt", default="Once upon a time, Tom and Mia went to the park. They")
    a = ap.parse_args()
    round_of(a.url, a.key, 1, 8, a.prompt)  # warm-up
    for n in [int(x) for x in a.streams.split(",")]:
        best = None
        for _ in range(a.rounds):
            wall, out = round_of(a.url, a.key, n, a.max_tokens, a.prompt)
            if len(out) != n:
                raise SystemExit(f"{n} streams: only {len(out)} requests finished")
            agg = n * a.max_tokens / wall
            if best is None or agg > best["aggregate_tokens_per_s"]:
                best = {"streams": n, "aggregate_tokens_per_s": round(agg, 1),
                        "ttft_median_ms": round(1000 * statistics.median(o["ttft_s"] for o in out), 1),
                        "ttft_max_ms": round(1000 * max(o["ttft_s"] for o in out), 1), "wall_s": round(wall, 3)}
        print(json.dumps(best), flush=True)


if __name__ == "__main__":
    main()
