// BatchScheduler: admission into slots (longest cached prefix, else least recently used), one forward_batch per
// step over decode tokens and budgeted prefill chunks, and the end of each request exactly once.
#include "engine/serve/batch_scheduler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <unordered_map>

#include "engine/error.h"

namespace engine {

void BatchSchedulerOptions::validate() const {
  const auto fail = [](const std::string& what) { throw Error("batch scheduler: " + what); };
  if (parallel < 1 || parallel > 4096) fail("parallel slots must be in [1, 4096], got " + std::to_string(parallel));
  if (max_queue < 0) fail("the queue bound must be >= 0, got " + std::to_string(max_queue));
  if (prefill_budget < 1) fail("the prefill budget must be >= 1 token, got " + std::to_string(prefill_budget));
}

struct BatchScheduler::Request {
  uint64_t id = 0;
  std::vector<int32_t> prompt;
  TokenCallback on_token;
  DoneCallback on_done;
  std::unique_ptr<GenerationState> state;
  std::atomic<bool> cancelled{false};
  size_t prefilled = 0;         // prompt tokens whose keys and values are in the slot's cache
  std::optional<int32_t> next;  // decoding: the token the next step feeds
};

struct BatchScheduler::Slot {
  Slot(const ModelConfig& config, int capacity) : cache(config, capacity) {}
  KVCache cache;
  std::vector<int32_t> cached;  // the tokens whose keys and values are in `cache`
  uint64_t last_used = 0;
  std::unique_ptr<Request> active;
};

namespace {

size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

}  // namespace

BatchScheduler::BatchScheduler(const Model& model, Backend& backend, const BatchSchedulerOptions& options)
    : m_model(model), m_options(options), m_runner(model, backend) {
  m_options.validate();
  const int context = model.config().max_seq_len;
  m_capacity = options.slot_capacity > 0 ? std::min(options.slot_capacity, context) : context;
  for (int i = 0; i < m_options.parallel; ++i) m_slots.push_back(std::make_unique<Slot>(model.config(), m_capacity));
}

BatchScheduler::~BatchScheduler() {
  std::vector<std::unique_ptr<Request>> ended;
  end_all(ended);
}

uint64_t BatchScheduler::submit(std::vector<int32_t> prompt, const GenerateParams& params, TokenCallback on_token,
                                DoneCallback on_done) {
  if (prompt.empty()) throw Error("the prompt is empty (no tokens)");
  if (static_cast<int64_t>(prompt.size()) > m_capacity)
    throw Error("the prompt has " + std::to_string(prompt.size()) + " tokens but a slot holds " +
                std::to_string(m_capacity));
  const int V = m_model.config().vocab_size;
  for (const int32_t t : prompt)
    if (t < 0 || t >= V) throw Error("the prompt has token " + std::to_string(t) + ", outside the vocabulary");
  auto request = std::make_unique<Request>();
  request->state = std::make_unique<GenerationState>(m_model, prompt, params);  // checks the settings
  request->prompt = std::move(prompt);
  request->on_token = std::move(on_token);
  request->on_done = std::move(on_done);
  std::lock_guard lock(m_mutex);
  int running = 0;
  for (const auto& s : m_slots) running += s->active != nullptr;
  // Requests that find a free slot never count against the queue bound.
  if (static_cast<int>(m_queue.size()) >= m_options.max_queue + (m_options.parallel - running)) {
    ++m_counters.rejected_busy;
    return 0;
  }
  request->id = m_next_id++;
  const uint64_t id = request->id;
  m_queue.push_back(std::move(request));
  m_wake.notify_all();
  return id;
}

bool BatchScheduler::cancel(uint64_t id) {
  std::lock_guard lock(m_mutex);
  for (const auto& r : m_queue)
    if (r->id == id) return !r->cancelled.exchange(true);
  for (const auto& s : m_slots)
    if (s->active && s->active->id == id) return !s->active->cancelled.exchange(true);
  return false;
}

SchedulerCounters BatchScheduler::counters() const {
  std::lock_guard lock(m_mutex);
  SchedulerCounters c = m_counters;
  c.queued = static_cast<int>(m_queue.size());
  c.running = 0;
  for (const auto& s : m_slots) c.running += s->active != nullptr;
  return c;
}

// Under m_mutex.
void BatchScheduler::admit(std::vector<std::unique_ptr<Request>>& ended) {
  for (auto it = m_queue.begin(); it != m_queue.end();) {
    if ((*it)->cancelled) {
      ended.push_back(std::move(*it));
      it = m_queue.erase(it);
    } else {
      ++it;
    }
  }
  while (!m_queue.empty()) {
    Slot* best = nullptr;
    size_t best_common = 0;
    const std::vector<int32_t>& prompt = m_queue.front()->prompt;
    for (const auto& s : m_slots) {
      if (s->active) continue;
      const size_t common = common_prefix(s->cached, prompt);
      if (!best || common > best_common || (common == best_common && s->last_used < best->last_used)) {
        best = s.get();
        best_common = common;
      }
    }
    if (!best) return;
    std::unique_ptr<Request> r = std::move(m_queue.front());
    m_queue.pop_front();
    // At least the last prompt token is computed again: its logits pick the first new token.
    const size_t common = std::min(best_common, r->prompt.size() - 1);
    best->cache.truncate(static_cast<int>(common));
    best->cached.resize(common);
    r->prefilled = common;
    r->state->stats().prefill_tokens = static_cast<int>(r->prompt.size() - common);
    m_counters.prompt_tokens += static_cast<int64_t>(r->prompt.size());
    m_counters.reused_prompt_tokens += static_cast<int64_t>(common);
    best->last_used = ++m_clock;
    best->active = std::move(r);
  }
}

bool BatchScheduler::step() {
  std::vector<std::unique_ptr<Request>> ended;
  {
    std::lock_guard lock(m_mutex);
    admit(ended);
  }
  // Running requests cancelled since the last step end before it.
  for (const auto& s : m_slots)
    if (s->active && s->active->cancelled) {
      s->active->state->cancel(s->active->on_token);
      std::lock_guard lock(m_mutex);  // cancel() reads `active` from other threads
      s->last_used = ++m_clock;
      ended.push_back(std::move(s->active));
    }

  // This step's sequences: every decoding request's next token, then prompt chunks, oldest request first.
  std::vector<SequenceStep> steps;
  std::vector<Slot*> owners;
  std::vector<int> chunks;  // prompt tokens per sequence (0: a decode token)
  for (const auto& s : m_slots)
    if (s->active && s->active->next) {
      steps.push_back({std::span<const int32_t>(&*s->active->next, 1), &s->cache});
      owners.push_back(s.get());
      chunks.push_back(0);
    }
  std::vector<Slot*> prefilling;
  for (const auto& s : m_slots)
    if (s->active && !s->active->next) prefilling.push_back(s.get());
  std::sort(prefilling.begin(), prefilling.end(), [](Slot* a, Slot* b) { return a->active->id < b->active->id; });
  int budget = m_options.prefill_budget;
  for (Slot* s : prefilling) {
    Request& r = *s->active;
    const int n = static_cast<int>(std::min<size_t>(r.prompt.size() - r.prefilled, size_t(budget)));
    if (n <= 0) break;
    steps.push_back({std::span<const int32_t>(r.prompt).subspan(r.prefilled, size_t(n)), &s->cache});
    owners.push_back(s);
    chunks.push_back(n);
    budget -= n;
  }

  if (!steps.empty()) {
    std::span<const float> logits;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      logits = m_runner.forward_batch(steps);
    } catch (...) {
      // Nothing was written (forward_batch checks first); end everyone rather than leave callers waiting.
      end_all(ended);
      throw;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const size_t V = static_cast<size_t>(m_model.config().vocab_size);
    for (size_t k = 0; k < owners.size(); ++k) {
      Slot& s = *owners[k];
      Request& r = *s.active;
      if (chunks[k] > 0) {
        s.cached.insert(s.cached.end(), r.prompt.begin() + std::ptrdiff_t(r.prefilled),
                        r.prompt.begin() + std::ptrdiff_t(r.prefilled) + chunks[k]);
        r.prefilled += size_t(chunks[k]);
        r.state->stats().prefill_seconds += seconds;
        if (r.prefilled < r.prompt.size()) continue;  // more of the prompt next step
      } else {
        s.cached.push_back(*r.next);
      }
      r.next = r.state->advance(logits.subspan(k * V, V), s.cache.size() >= s.cache.capacity(), r.on_token);
      if (r.state->done()) {
        std::lock_guard lock(m_mutex);
        s.last_used = ++m_clock;
        ended.push_back(std::move(s.active));
      }
    }
  }

  {
    std::lock_guard lock(m_mutex);
    if (!steps.empty()) ++m_counters.steps;
    for (const auto& r : ended) {
      ++m_counters.completed;
      m_counters.generated_tokens += r->state->result().stats.generated_tokens;
    }
  }
  for (auto& r : ended) {
    r->state->cancel(r->on_token);  // a no-op for requests that ended by themselves
    if (r->on_done) r->on_done(r->state->result());
  }
  return !steps.empty() || !ended.empty();
}

void BatchScheduler::end_all(std::vector<std::unique_ptr<Request>>& ended) {
  {
    std::lock_guard lock(m_mutex);
    for (auto& r : m_queue) ended.push_back(std::move(r));
    m_queue.clear();
    for (const auto& s : m_slots)
      if (s->active) ended.push_back(std::move(s->active));
  }
  for (auto& r : ended) {
    if (!r) continue;
    r->state->cancel(r->on_token);
    if (r->on_done) r->on_done(r->state->result());
    r.reset();
  }
}

void BatchScheduler::run() {
  for (;;) {
    if (!step()) {
      std::unique_lock lock(m_mutex);
      m_wake.wait(lock, [&] { return m_stop || !m_queue.empty(); });
    }
    std::lock_guard lock(m_mutex);
    if (m_stop) break;
  }
  std::vector<std::unique_ptr<Request>> ended;
  end_all(ended);
}

void BatchScheduler::stop() {
  std::lock_guard lock(m_mutex);
  m_stop = true;
  m_wake.notify_all();
}

}  // namespace engine
