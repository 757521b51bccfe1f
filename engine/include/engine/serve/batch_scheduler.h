// BatchScheduler: continuous batching of many generation requests on one model.
//
// Requests wait in a bounded FIFO queue and run in a fixed number of slots, each with its own KV cache. Every
// step is ONE Runner::forward_batch over all running requests: each decoding request adds its next token and
// requests still reading their prompt add a chunk of it (prefill chunks share a per-step token budget, oldest
// first), so a long prompt never stalls the running streams for more than one chunk, and the weights are read
// once per step for everyone (decode is bound by reading the weights). Requests join at the start of a step and
// leave as soon as they end; the per-token logic is GenerationState's, the same as the Generator's, so a request
// produces exactly what a plain Generator would from the same logits.
//
// Prefix cache: a slot keeps its tokens' keys and values after its request ends. A new request takes the free
// slot whose cached tokens share the longest prefix with its prompt (a chat's earlier turns, a common system
// prompt) and computes only the rest; with no shared prefix it takes the least recently used slot. Memory is
// therefore bounded by slots x capacity, and eviction is least-recently-used by construction.
//
// Threads: submit(), cancel() and counters() may be called from any thread. step() and run() must be called from
// one thread only (the Runner is not thread-safe); the callbacks run on that thread and must not call step().
//
// Invariants
// - A request ends exactly once: its DoneCallback is called with its result (finish: length, eos, stop,
//   cancelled or context_full), whether it ran, was cancelled while queued, or the scheduler was stopped.
// - No request starves: admission is first in, first out, and every running request advances every step
//   (decoding ones by a token; the oldest prefilling ones take the prefill budget first).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/generation_state.h"
#include "engine/generator.h"
#include "engine/kv_cache.h"
#include "engine/model.h"

namespace engine {

struct BatchSchedulerOptions {
  int parallel = 4;             // slots: requests that run at once
  int max_queue = 64;           // requests that may wait; beyond it submit() answers busy
  int prefill_budget = 256;     // prompt tokens computed per step over all prefilling requests
  int slot_capacity = 0;        // tokens per slot's cache; <= 0: the model's context
  void validate() const;        // engine::Error naming the first value out of range
};

struct SchedulerCounters {
  int running = 0, queued = 0;
  int64_t steps = 0;               // forward_batch calls
  int64_t prompt_tokens = 0;       // over all admitted requests
  int64_t reused_prompt_tokens = 0;  // of those, taken from a slot's cache instead of computed
  int64_t generated_tokens = 0;
  int64_t completed = 0, rejected_busy = 0;
};

class BatchScheduler {
 public:
  using DoneCallback = std::function<void(const GenerationResult&)>;

  // `model` and `backend` must outlive the scheduler. Throws engine::Error for bad options.
  BatchScheduler(const Model& model, Backend& backend, const BatchSchedulerOptions& options = {});
  ~BatchScheduler();

  // Queues a request. Returns its id (> 0), or 0 when the queue is full (the caller answers "busy"). Throws
  // engine::Error for a request that can never run: an empty prompt, a prompt longer than a slot holds, a bad
  // setting (GenerationState's checks). `on_token` may be empty; returning false from it cancels the request.
  uint64_t submit(std::vector<int32_t> prompt, const GenerateParams& params, TokenCallback on_token,
                  DoneCallback on_done);
  // Cancels a queued or running request (it ends at the next step with finish "cancelled"). False when the id
  // is unknown or already ended.
  bool cancel(uint64_t id);

  // One scheduling step on the calling thread: admits queued requests into free slots, runs one batched forward
  // and ends the requests that finished. Returns false when there was nothing to do.
  bool step();
  // Runs steps until stop(), sleeping while idle; then ends every queued and running request as cancelled.
  void run();
  void stop();

  SchedulerCounters counters() const;
  const BatchSchedulerOptions& options() const { return m_options; }
  int slot_capacity() const { return m_capacity; }

 private:
  struct Request;
  struct Slot;
  void admit(std::vector<std::unique_ptr<Request>>& ended);
  void end_all(std::vector<std::unique_ptr<Request>>& ended);

  const Model& m_model;
  BatchSchedulerOptions m_options;
  int m_capacity = 0;
  Runner m_runner;
  std::vector<std::unique_ptr<Slot>> m_slots;

  mutable std::mutex m_mutex;  // guards the queue, the cancel flags, the counters and m_stop
  std::condition_variable m_wake;
  std::deque<std::unique_ptr<Request>> m_queue;
  uint64_t m_next_id = 1;
  uint64_t m_clock = 0;  // slot recency
  bool m_stop = false;
  SchedulerCounters m_counters;
};

}  // namespace engine
