// The trainer's data-parallel path (engine/train/trainer.h) with ranks as threads of this process
// (support/thread_communicator.h), so it is tested in every build, with or without MPI:
//   - 2 ranks x B/2 rows give the losses, gradient norms, validation losses and weights of 1 rank x B rows, for
//     pretraining (shuffled, gradient accumulation, clipping, weight decay, a validation batch that splits unevenly)
//     and for SFT-style masked batches whose halves count different numbers of tokens; the ranks' weights stay
//     identical bit for bit;
//   - rank 0 alone writes checkpoints; a stop on one rank stops both after the same step;
//   - an objective or a batch smaller than the world is refused;
//   - GradientSync's buckets cover every gradient value exactly once, merging neighbours and splitting large tensors.
//   - ZeRO stage 1 (zero_stage 1) at 2 and 3 ranks (3: shards of unequal length, rows split 1/1/2) gives bit for bit
//     the losses, norms and weights of plain data parallelism (this communicator adds in rank order for both), each
//     rank holding its share of the AdamW state; its checkpoints are byte for byte those of the unsharded run and
//     resume at world size 1 (unsharded) and 3 (sharded);
//   - shard_bounds is balanced and aligned; ZeroShard's reduce-scatter and all-gather, over tensors in two buffers
//     cut into small pieces, deliver exactly each rank's sums and every rank's values; the sharded norm is global
//     and names a non-finite gradient on another rank's shard.
//   - a non-finite step under ZeRO is refused on every rank alike, weights and moments untouched.
// The CLI under a real `mpirun -np 2` is tests/dist/test_data_parallel.cpp.
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <span>
#include <thread>

#include "engine/backend.h"
#include "engine/model_loader.h"
#include "engine/train/checkpoint.h"
#include "engine/train/grad_clip.h"
#include "engine/train/gradient_sync.h"
#include "engine/train/sequence_loader.h"
#include "engine/train/text_dataset.h"
#include "engine/train/trainer.h"
#include "engine/train/zero_shard.h"
#include "support/error_of.h"
#include "support/thread_communicator.h"

using namespace engine;

namespace {

const std::string kTiny = std::string(WB_TEST_DATA_DIR) + "/tiny-gpt2";

std::vector<int32_t> pattern_tokens(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (rng() % 5 == 0) ? int32_t(rng() % 512) : int32_t((i * 7) % 61);
  return v;
}

// Conversations whose assistant part (mask 1) is 1 to 20 tokens long after a prompt of 3 to 10: the rows of one
// batch count very different numbers of tokens.
std::vector<EncodedChat> masked_sequences(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<EncodedChat> out;
  for (int i = 0; i < n; ++i) {
    EncodedChat c;
    const int prompt = 3 + int(rng() % 8), reply = 1 + int(rng() % 20);
    for (int t = 0; t < prompt + reply; ++t) {
      c.ids.push_back(int32_t(rng() % 512));
      c.assistant_mask.push_back(t >= prompt ? 1 : 0);
    }
    out.push_back(std::move(c));
  }
  return out;
}

TrainerOptions options(int64_t steps) {
  TrainerOptions o;
  o.steps = steps;
  o.grad_accum = 2;
  o.grad_clip = 0.5f;
  o.schedule.kind = LrScheduleKind::Cosine;
  o.schedule.base_lr = 3e-3f;
  o.schedule.warmup_steps = 2;
  o.schedule.total_steps = int(steps);
  o.adam.weight_decay = 0.1;
  o.seed = 11;
  return o;
}

struct RankResult {
  std::vector<StepMetrics> steps;
  std::vector<float> params;
};

// One rank's run: its own copy of the model, loaders and trainer. make_train / make_val build the rank's loaders
// (every rank builds the same global ones).
using LoaderFactory = std::function<std::unique_ptr<BatchLoader>()>;

RankResult run_rank(const TrainerOptions& base, Communicator* comm, const LoaderFactory& make_train,
                    const LoaderFactory& make_val, const std::function<bool(const StepMetrics&)>& on_step = {},
                    bool resume = false) {
  auto model = load_model(kTiny);
  auto be = make_cpu_backend(1);
  TrainModel tm(*model, *be);
  std::unique_ptr<BatchLoader> train = make_train(), val = make_val ? make_val() : nullptr;
  TrainerOptions o = base;
  o.communicator = comm;
  Trainer trainer(tm, *train, val.get(), nullptr, o);
  if (resume) trainer.resume();
  RankResult r;
  trainer.run([&](const StepMetrics& m) {
    r.steps.push_back(m);
    return on_step ? on_step(m) : true;
  });
  r.params.assign(model->all_params().begin(), model->all_params().end());
  return r;
}

// The ranks of `world`, each in its own thread.
std::vector<RankResult> run_world(int world, const TrainerOptions& o, const LoaderFactory& make_train,
                                  const LoaderFactory& make_val,
                                  const std::function<bool(int, const StepMetrics&)>& on_step = {},
                                  bool resume = false) {
  ThreadGroup group(world);
  std::vector<std::unique_ptr<Communicator>> comms;
  for (int r = 0; r < world; ++r) comms.push_back(group.communicator(r));
  std::vector<RankResult> results(static_cast<size_t>(world));
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      std::function<bool(const StepMetrics&)> cb;
      if (on_step) cb = [&, r](const StepMetrics& m) { return on_step(r, m); };
      results[size_t(r)] = run_rank(o, comms[size_t(r)].get(), make_train, make_val, cb, resume);
    });
  for (std::thread& t : threads) t.join();
  return results;
}

double rel(double a, double b) { return std::fabs(a - b) / std::max(1.0, std::fabs(b)); }

// N ranks against 1: the curves within float rounding, the ranks' weights identical, the weights near 1 rank's.
void compare(const RankResult& one, const std::vector<RankResult>& two) {
  QCOMPARE(two[0].steps.size(), one.steps.size());
  double worst = 0;
  for (size_t i = 0; i < one.steps.size(); ++i) {
    const StepMetrics &a = two[0].steps[i], &b = one.steps[i];
    QCOMPARE(a.world_size, int(two.size()));
    QVERIFY(a.allreduce_bytes > 0);
    QCOMPARE(a.val_loss.has_value(), b.val_loss.has_value());
    worst = std::max({worst, rel(a.loss, b.loss), rel(a.grad_norm, b.grad_norm),
                      a.val_loss ? rel(*a.val_loss, *b.val_loss) : 0.0});
    QVERIFY2(rel(a.loss, b.loss) < 1e-5 && rel(a.grad_norm, b.grad_norm) < 1e-4,
             qPrintable(QString("step %1: loss %2 vs %3, grad norm %4 vs %5")
                            .arg(i + 1)
                            .arg(a.loss, 0, 'g', 9)
                            .arg(b.loss, 0, 'g', 9)
                            .arg(a.grad_norm, 0, 'g', 9)
                            .arg(b.grad_norm, 0, 'g', 9)));
    if (a.val_loss) QVERIFY(rel(*a.val_loss, *b.val_loss) < 1e-5);
    // Every rank reports the same global values.
    for (size_t r = 1; r < two.size(); ++r) {
      QCOMPARE(two[r].steps[i].loss, a.loss);
      QCOMPARE(two[r].steps[i].grad_norm, a.grad_norm);
    }
  }
  qInfo("largest relative difference of loss, grad norm, val loss: %.2e", worst);
  for (size_t r = 1; r < two.size(); ++r)
    QVERIFY(std::memcmp(two[0].params.data(), two[r].params.data(), two[0].params.size() * sizeof(float)) == 0);
  // Adam turns rounding-level gradients into full-size steps of either sign, so single weights may differ by a few
  // learning rates; the run as a whole must not: the difference is tiny beside what training changed.
  auto start = load_model(kTiny);
  const std::span<const float> w0 = start->all_params();
  double diff = 0, moved = 0;
  for (size_t i = 0; i < one.params.size(); ++i) {
    diff += std::pow(double(two[0].params[i]) - one.params[i], 2);
    moved += std::pow(double(one.params[i]) - w0[i], 2);
  }
  const double ratio = std::sqrt(diff / moved);
  qInfo("|weights(2 ranks) - weights(1 rank)| / |weights(1 rank) - start| = %.2e", ratio);
  QVERIFY(ratio < 1e-2);
}

// Two runs of the same world that must agree bit for bit (ZeRO against plain data parallelism over this test's
// communicator, which adds the same values in the same order in both).
void compare_exact(const std::vector<RankResult>& zero, const std::vector<RankResult>& plain) {
  QCOMPARE(zero.size(), plain.size());
  for (size_t r = 0; r < zero.size(); ++r) {
    QCOMPARE(zero[r].steps.size(), plain[r].steps.size());
    for (size_t i = 0; i < zero[r].steps.size(); ++i) {
      const StepMetrics &a = zero[r].steps[i], &b = plain[r].steps[i];
      QCOMPARE(a.zero_stage, 1);
      QCOMPARE(b.zero_stage, 0);
      QCOMPARE(a.loss, b.loss);
      QCOMPARE(a.grad_norm, b.grad_norm);
      QCOMPARE(a.val_loss.has_value(), b.val_loss.has_value());
      if (a.val_loss) QCOMPARE(*a.val_loss, *b.val_loss);
      QCOMPARE(a.allreduce_bytes, b.allreduce_bytes);
    }
    QVERIFY(std::memcmp(zero[r].params.data(), plain[r].params.data(), zero[r].params.size() * sizeof(float)) == 0);
  }
  // Each rank holds its share of the state: together exactly the unsharded state, each within one alignment unit of
  // an even share.
  const uint64_t whole = plain[0].steps[0].optimizer_bytes;
  uint64_t sum = 0;
  for (const RankResult& r : zero) {
    const uint64_t mine = r.steps[0].optimizer_bytes;
    sum += mine;
    QVERIFY(mine <= whole / zero.size() + kShardAlign * 2 * sizeof(float));
    QVERIFY(mine + kShardAlign * 2 * sizeof(float) >= whole / zero.size());
  }
  QCOMPARE(sum, whole);
}

QByteArray file_bytes(const std::string& path) {
  QFile f(QString::fromStdString(path));
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Adds 1 to every value it sums: a communicator for checking which values GradientSync sends.
class CountingComm final : public Communicator {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 2; }
  int local_size() const override { return 2; }
  std::string backend_name() const override { return "counting"; }
  void allreduce_sum(float* d, size_t n) override { bump(d, n); }
  void allreduce_sum(double*, size_t) override {}
  void start_allreduce_sum(float* d, size_t n) override { bump(d, n); }
  void wait_all() override {}
  void reduce_scatter_sum(float*, std::span<const size_t>) override {}
  void allgather(float*, std::span<const size_t>) override {}
  bool any(bool f) override { return f; }
  void barrier() override {}
  [[noreturn]] void abort(int code) override { std::exit(code); }
  std::vector<size_t> calls;

 private:
  void bump(float* d, size_t n) {
    calls.push_back(n);
    for (size_t i = 0; i < n; ++i) d[i] += 1.0f;
  }
};

}  // namespace

class TestDataParallelTrainer : public QObject {
  Q_OBJECT

 private slots:
  void pretrain_two_ranks_match_one() {
    const std::vector<int32_t> tokens = pattern_tokens(6000, 3), val_tokens = pattern_tokens(400, 4);
    const LoaderFactory train = [&] { return std::make_unique<TokenStreamLoader>(tokens, 4, 16, true, 99, "t"); };
    // 3 rows per validation batch: rank 0 takes 1, rank 1 takes 2.
    const LoaderFactory val = [&] { return std::make_unique<TokenStreamLoader>(val_tokens, 3, 16, false, 0, "v"); };
    TrainerOptions o = options(8);
    o.val_every = 4;
    o.val_batches = 2;
    const RankResult one = run_rank(o, nullptr, train, val);
    QCOMPARE(one.steps[0].world_size, 1);
    QCOMPARE(one.steps[0].allreduce_bytes, uint64_t(0));
    compare(one, run_world(2, o, train, val));
    QVERIFY(one.steps.back().loss < one.steps.front().loss);
  }

  void masked_rows_are_weighted_by_global_tokens() {
    const std::vector<EncodedChat> seqs = masked_sequences(64, 5);
    const LoaderFactory train = [&] { return std::make_unique<SequenceLoader>(seqs, 4, 24, true, 7, 0, "s"); };
    // The test means something only when the halves of the batches count different numbers of tokens.
    {
      SequenceLoader probe(seqs, 4, 24, true, 7, 0, "s");
      Batch b, half0, half1;
      int uneven = 0;
      for (int i = 0; i < 10; ++i) {
        probe.next(b);
        take_rows(b, 0, 2, half0);
        take_rows(b, 2, 2, half1);
        QCOMPARE(half0.counted_weight() + half1.counted_weight(), b.counted_weight());
        uneven += half0.counted_weight() != half1.counted_weight();
      }
      QVERIFY(uneven >= 8);
    }
    const TrainerOptions o = options(5);
    compare(run_rank(o, nullptr, train, nullptr), run_world(2, o, train, nullptr));
  }

  void rank0_alone_writes_checkpoints_and_a_stop_on_one_rank_stops_all() {
    QTemporaryDir dir;
    const std::vector<int32_t> tokens = pattern_tokens(3000, 8);
    const LoaderFactory train = [&] { return std::make_unique<TokenStreamLoader>(tokens, 2, 16, true, 1, "t"); };
    TrainerOptions o = options(6);
    o.grad_accum = 1;
    o.save_every = 2;
    o.keep_checkpoints = 0;
    o.checkpoint_dir = dir.path().toStdString();
    // Rank 1 asks to stop after step 3: both ranks stop there, and rank 0 writes the stop's checkpoint.
    const std::vector<RankResult> r =
        run_world(2, o, train, nullptr, [](int rank, const StepMetrics& m) { return !(rank == 1 && m.step == 3); });
    QCOMPARE(r[0].steps.size(), size_t(3));
    QCOMPARE(r[1].steps.size(), size_t(3));
    QVERIFY(QString::fromStdString(r[0].steps[1].checkpoint).endsWith("ckpt_00000002.safetensors"));
    QVERIFY(r[1].steps[1].checkpoint.empty());
    QCOMPARE(list_checkpoints(o.checkpoint_dir).size(), size_t(2));  // steps 2 and 3 (the stop's)
  }

  void objectives_and_small_batches_are_refused() {
    ThreadGroup group(2);
    auto comm = group.communicator(0);
    auto model = load_model(kTiny);
    auto be = make_cpu_backend(1);
    TrainModel tm(*model, *be);
    TrainerOptions o = options(1);
    o.communicator = comm.get();
    TokenStreamLoader one_row(pattern_tokens(500, 1), 1, 16, false, 0, "t");
    QVERIFY(error_of([&] { Trainer t(tm, one_row, nullptr, nullptr, o); }).contains("cannot be shared by 2"));
    struct AnyObjective : TrainObjective {
      ObjectiveResult forward_backward(TrainModel&, const Batch&, const TrainStepOptions&, float) override {
        return {};
      }
      ObjectiveResult evaluate(TrainModel&, const Batch&) override { return {}; }
    } objective;
    TokenStreamLoader rows(pattern_tokens(500, 1), 4, 16, false, 0, "t");
    QVERIFY(error_of([&] { Trainer t(tm, rows, nullptr, nullptr, o, &objective); }).contains("language-model loss"));
  }

  // ZeRO stage 1 against plain data parallelism at 2 and 3 ranks (3: unequal shards, rows 1/1/2 of each batch), and
  // at 1 rank against the unsharded run: bit for bit; and against 1 rank as plain data parallelism is.
  void zero_matches_plain_data_parallel() {
    const std::vector<int32_t> tokens = pattern_tokens(6000, 3), val_tokens = pattern_tokens(400, 4);
    const LoaderFactory train = [&] { return std::make_unique<TokenStreamLoader>(tokens, 4, 16, true, 99, "t"); };
    const LoaderFactory val = [&] { return std::make_unique<TokenStreamLoader>(val_tokens, 3, 16, false, 0, "v"); };
    TrainerOptions o = options(6);
    o.val_every = 3;
    o.val_batches = 2;
    TrainerOptions z = o;
    z.zero_stage = 1;
    const RankResult one = run_rank(o, nullptr, train, val);
    compare_exact({run_rank(z, nullptr, train, val)}, {one});
    for (int world : {2, 3}) {
      const std::vector<RankResult> zero = run_world(world, z, train, val);
      compare_exact(zero, run_world(world, o, train, val));
      compare(one, zero);
    }
  }

  // A ZeRO checkpoint holds the whole optimizer state: byte for byte the file of the unsharded run. Cut after step 2,
  // it resumes at world size 1 without ZeRO and at 3 with it, and steps 3 to 6 follow the uninterrupted run.
  void zero_checkpoints_hold_the_whole_state_and_resume_at_any_world() {
    QTemporaryDir dir;
    const std::string root = dir.path().toStdString();
    const std::vector<int32_t> tokens = pattern_tokens(4000, 8);
    const LoaderFactory train = [&] { return std::make_unique<TokenStreamLoader>(tokens, 4, 16, true, 1, "t"); };
    TrainerOptions o = options(6);
    o.grad_accum = 1;
    o.save_every = 2;
    o.keep_checkpoints = 0;
    o.checkpoint_dir = root + "/plain";
    run_world(2, o, train, nullptr);
    TrainerOptions z = o;
    z.zero_stage = 1;
    z.checkpoint_dir = root + "/zero";
    const std::vector<RankResult> straight = run_world(2, z, train, nullptr);
    QVERIFY(straight[1].steps[1].checkpoint.empty());  // rank 0 alone writes
    for (const char* name : {"/ckpt_00000002.safetensors", "/ckpt_00000006.safetensors"}) {
      const QByteArray zero = file_bytes(z.checkpoint_dir + name);
      QVERIFY(zero.size() > 1000);
      QVERIFY(zero == file_bytes(o.checkpoint_dir + name));
    }
    for (int world : {1, 3}) {
      TrainerOptions r = world == 1 ? o : z;
      r.checkpoint_dir = root + "/resume-" + std::to_string(world);
      std::filesystem::create_directories(r.checkpoint_dir);
      std::filesystem::copy_file(z.checkpoint_dir + "/ckpt_00000002.safetensors",
                                 r.checkpoint_dir + "/ckpt_00000002.safetensors");
      const std::vector<RankResult> resumed =
          world == 1 ? std::vector<RankResult>{run_rank(r, nullptr, train, nullptr, {}, true)}
                     : run_world(world, r, train, nullptr, {}, true);
      QCOMPARE(resumed[0].steps.size(), size_t(4));
      for (size_t i = 0; i < 4; ++i) {
        const StepMetrics &a = resumed[0].steps[i], &b = straight[0].steps[i + 2];
        QCOMPARE(a.step, b.step);
        QVERIFY2(rel(a.loss, b.loss) < 1e-5 && rel(a.grad_norm, b.grad_norm) < 1e-4,
                 qPrintable(QString("world %1, step %2: loss %3 vs %4, grad norm %5 vs %6")
                                .arg(world)
                                .arg(a.step)
                                .arg(a.loss, 0, 'g', 9)
                                .arg(b.loss, 0, 'g', 9)
                                .arg(a.grad_norm, 0, 'g', 9)
                                .arg(b.grad_norm, 0, 'g', 9)));
      }
    }
  }

  void shard_bounds_are_balanced_and_aligned() {
    for (uint64_t total : {uint64_t(0), uint64_t(1), uint64_t(15), uint64_t(16), uint64_t(17), uint64_t(100),
                           uint64_t(1000003), uint64_t(1) << 40})
      for (int world : {1, 2, 3, 7, 64}) {
        const std::vector<uint64_t> b = shard_bounds(total, world);
        QCOMPARE(b.size(), size_t(world) + 1);
        QCOMPARE(b.front(), uint64_t(0));
        QCOMPARE(b.back(), total);
        for (int r = 0; r < world; ++r) {
          QVERIFY(b[size_t(r)] <= b[size_t(r) + 1]);
          if (r > 0) QCOMPARE(b[size_t(r)] % kShardAlign, uint64_t(0));
          const double even = double(total) / world, size = double(b[size_t(r) + 1] - b[size_t(r)]);
          QVERIFY2(std::fabs(size - even) <= double(kShardAlign),
                   qPrintable(QString("total %1, world %2, rank %3: %4 values")
                                  .arg(total)
                                  .arg(world)
                                  .arg(r)
                                  .arg(size)));
        }
      }
    QVERIFY(!error_of([] { shard_bounds(10, 0); }).isEmpty());
  }

  // Three ranks over 92 values in four tensors (three back to back in one buffer, one elsewhere) cut into 8-value
  // pieces: the shards are [0, 16), [16, 48), [48, 92), so pieces and tensors straddle them.
  void zero_shard_exchanges_deliver_each_ranks_part() {
    constexpr int kWorld = 3;
    const uint64_t sizes[4] = {10, 37, 5, 40};
    ThreadGroup group(kWorld);
    std::vector<std::unique_ptr<Communicator>> comms;
    for (int r = 0; r < kWorld; ++r) comms.push_back(group.communicator(r));
    std::vector<QString> failures(kWorld);
    std::vector<std::thread> threads;
    for (int rank = 0; rank < kWorld; ++rank)
      threads.emplace_back([&, rank] {
        QString& fail = failures[size_t(rank)];
        std::vector<float> arena_v(52), arena_g(52), other_v(40), other_g(40);
        std::vector<TrainableTensor> ts(4);
        float* values[4] = {arena_v.data(), arena_v.data() + 10, arena_v.data() + 47, other_v.data()};
        float* grads[4] = {arena_g.data(), arena_g.data() + 10, arena_g.data() + 47, other_g.data()};
        const char* names[4] = {"t0", "t1", "t2", "t3"};
        for (int i = 0; i < 4; ++i) {
          ts[size_t(i)].name = names[i];
          ts[size_t(i)].value = values[i];
          ts[size_t(i)].grad = grads[i];
          ts[size_t(i)].numel = sizes[i];
        }
        // flat index k of the values as one array
        auto at = [&](uint64_t k, bool grad) -> float& {
          for (int i = 0; i < 4; ++i) {
            if (k < sizes[i]) return (grad ? grads[i] : values[i])[k];
            k -= sizes[i];
          }
          std::abort();
        };
        ZeroShard zs(*comms[size_t(rank)], ts, 8 * sizeof(float));
        const FlatRange mine = zs.shard();
        const FlatRange want[kWorld] = {{0, 16}, {16, 48}, {48, 92}};
        if (!(mine == want[rank])) fail += QString("shard [%1, %2) ").arg(mine.begin).arg(mine.end);
        for (uint64_t k = 0; k < 92; ++k) {
          at(k, true) = float((rank + 1) * (k + 1));
          at(k, false) = k >= mine.begin && k < mine.end ? float(1000 + k) : -5.0f;
        }
        zs.reduce_scatter_gradients();
        for (uint64_t k = mine.begin; k < mine.end; ++k)
          if (at(k, true) != float(6 * (k + 1))) fail += QString("grad %1 = %2 ").arg(k).arg(at(k, true));
        zs.all_gather_values();
        for (uint64_t k = 0; k < 92; ++k)
          if (at(k, false) != float(1000 + k)) fail += QString("value %1 = %2 ").arg(k).arg(at(k, false));
        // The sharded norm is the global one, on every rank.
        double want_sq = 0;
        for (uint64_t k = 0; k < 92; ++k) want_sq += double(6 * (k + 1)) * double(6 * (k + 1));
        GradNormReport n = clip_grad_norm_sharded(ts, mine, 0.0f, *comms[size_t(rank)]);
        if (!n.finite || std::fabs(n.norm - std::sqrt(want_sq)) > 1e-9 * n.norm)
          fail += QString("norm %1 ").arg(n.norm);
        // A NaN in rank 2's part of t3 is seen and named on every rank.
        if (rank == 2) at(80, true) = std::nanf("");
        n = clip_grad_norm_sharded(ts, mine, 1.0f, *comms[size_t(rank)]);
        if (n.finite || n.first_bad != "t3") fail += QString("bad '%1' ").arg(QString::fromStdString(n.first_bad));
        // The sharded moments gathered to rank 0: the whole state, each value's moments where they belong.
        AdamW opt(ts, AdamWParams{}, nullptr, mine);
        opt.set_step_count(7);
        for (size_t i = 0; i < 4; ++i)
          for (size_t j = 0; j < opt.first_moment(i).size(); ++j) {
            uint64_t k = opt.moment_offset(i) + j;
            for (size_t p = 0; p < i; ++p) k += sizes[p];
            opt.first_moment(i)[j] = float(k);
            opt.second_moment(i)[j] = float(2 * k);
          }
        const std::unique_ptr<AdamW> whole = zs.gather_optimizer(opt, 0);
        if ((whole != nullptr) != (rank == 0)) fail += "gathered on the wrong rank ";
        if (whole) {
          if (whole->sharded() || whole->step_count() != 7) fail += "gathered state is sharded or at another step ";
          uint64_t k = 0;
          for (size_t i = 0; i < 4; ++i)
            for (size_t j = 0; j < sizes[i]; ++j, ++k)
              if (whole->first_moment(i)[j] != float(k) || whole->second_moment(i)[j] != float(2 * k))
                fail += QString("moment %1 ").arg(k);
        }
      });
    for (std::thread& t : threads) t.join();
    for (int r = 0; r < kWorld; ++r)
      QVERIFY2(failures[size_t(r)].isEmpty(), qPrintable(QString("rank %1: %2").arg(r).arg(failures[size_t(r)])));
  }

  // A NaN weight on every rank: the global loss and the sharded norm are not finite on both ranks alike, both refuse
  // the step with the same message, and no rank touched its weights or its shard of the moments.
  void zero_refuses_a_nonfinite_step_on_every_rank() {
    const std::vector<int32_t> tokens = pattern_tokens(2000, 1);
    ThreadGroup group(2);
    std::vector<std::unique_ptr<Communicator>> comms;
    for (int r = 0; r < 2; ++r) comms.push_back(group.communicator(r));
    std::vector<QString> errors(2), failures(2);
    std::vector<std::thread> threads;
    for (int rank = 0; rank < 2; ++rank)
      threads.emplace_back([&, rank] {
        auto model = load_model(kTiny);
        model->param_data("h.fc.weight")[17] = NAN;
        const std::vector<float> before(model->all_params().begin(), model->all_params().end());
        auto be = make_cpu_backend(1);
        TrainModel tm(*model, *be);
        TokenStreamLoader loader(tokens, 2, 16, false, 0, "t");
        TrainerOptions o = options(3);
        o.zero_stage = 1;
        o.communicator = comms[size_t(rank)].get();
        Trainer t(tm, loader, nullptr, nullptr, o);
        errors[size_t(rank)] = error_of([&] { t.run(); });
        if (std::memcmp(before.data(), model->all_params().data(), before.size() * sizeof(float)) != 0)
          failures[size_t(rank)] += "weights changed ";
        if (t.optimizer().step_count() != 0 || !t.optimizer().sharded()) failures[size_t(rank)] += "optimizer stepped ";
        for (size_t i = 0; i < t.optimizer().tensors().size(); ++i)
          for (float m : t.optimizer().first_moment(i))
            if (m != 0.0f) failures[size_t(rank)] += "moment changed ";
      });
    for (std::thread& th : threads) th.join();
    for (int r = 0; r < 2; ++r) {
      QVERIFY2(failures[size_t(r)].isEmpty(), qPrintable(failures[size_t(r)]));
      const QString& e = errors[size_t(r)];
      QVERIFY2(e.contains("step 1: the loss is NaN") && e.contains("weights are unchanged"), qPrintable(e));
    }
  }

  void zero_is_refused_for_objectives() {
    auto model = load_model(kTiny);
    auto be = make_cpu_backend(1);
    TrainModel tm(*model, *be);
    TrainerOptions o = options(1);
    o.zero_stage = 1;
    struct AnyObjective : TrainObjective {
      ObjectiveResult forward_backward(TrainModel&, const Batch&, const TrainStepOptions&, float) override {
        return {};
      }
      ObjectiveResult evaluate(TrainModel&, const Batch&) override { return {}; }
    } objective;
    TokenStreamLoader rows(pattern_tokens(500, 1), 4, 16, false, 0, "t");
    QVERIFY(error_of([&] { Trainer t(tm, rows, nullptr, nullptr, o, &objective); }).contains("ZeRO"));
    o.zero_stage = 2;
    QVERIFY(error_of([&] { Trainer t(tm, rows, nullptr, nullptr, o); }).contains("ZeRO stage must be 0 or 1"));
  }

  void gradient_buckets_cover_every_value_once() {
    // Three tensors back to back in one buffer (an arena) and one elsewhere, 16-float buckets.
    std::vector<float> arena(10 + 20 + 5, 0.0f), other(40, 0.0f);
    std::vector<TrainableTensor> ts(4);
    ts[0].grad = arena.data();
    ts[0].numel = 10;
    ts[1].grad = arena.data() + 10;
    ts[1].numel = 20;
    ts[2].grad = arena.data() + 30;
    ts[2].numel = 5;
    ts[3].grad = other.data();
    ts[3].numel = 40;
    CountingComm comm;
    GradientSync sync(comm, ts, 16 * sizeof(float));
    QCOMPARE(sync.bytes_per_reduce(), uint64_t(75 * sizeof(float)));
    sync.all_reduce();
    for (float v : arena) QCOMPARE(v, 1.0f);
    for (float v : other) QCOMPARE(v, 1.0f);
    // 40 floats in buckets of 16 (3), then the 35 contiguous ones (3): neighbours share a bucket.
    QCOMPARE(sync.bucket_count(), size_t(6));
    for (size_t n : comm.calls) QVERIFY(n <= 16);
  }
};

QTEST_GUILESS_MAIN(TestDataParallelTrainer)
#include "test_data_parallel_trainer.moc"
