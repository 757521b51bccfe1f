// The one-process communicator and the choice of this process's communicator: see engine/dist/communicator.h.
#include "engine/dist/communicator.h"

#include <cstdlib>
#include <string>

#include "dist/communicator_mpi.h"
#include "engine/error.h"

namespace engine {

namespace {

class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  int local_size() const override { return 1; }
  std::string backend_name() const override { return "local"; }
  void allreduce_sum(float*, size_t) override {}
  void allreduce_sum(double*, size_t) override {}
  void start_allreduce_sum(float*, size_t) override {}
  void wait_all() override {}
  // One block, this rank's: it already holds the sum and the whole gather.
  void reduce_scatter_sum(float*, std::span<const size_t>) override {}
  void allgather(float*, std::span<const size_t>) override {}
  bool any(bool flag) override { return flag; }
  void barrier() override {}
  [[noreturn]] void abort(int code) override { std::exit(code); }
};

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

long env_number(const char* name) {
  const char* v = env(name);
  return v ? std::strtol(v, nullptr, 10) : -1;
}

// Whether a launcher started this process: Open MPI's mpirun, a PMI launcher (MPICH's hydra, srun --mpi=pmi2) or a
// PMIx one (srun --mpi=pmix, prun). A plain shell -- also a Slurm batch script outside srun -- sets none of these.
bool started_by_launcher() {
  return env("OMPI_COMM_WORLD_SIZE") || env("PMI_RANK") || env("PMI_SIZE") || env("PMIX_RANK");
}

// The number of processes the launcher says it started, for the message when this build cannot join them.
[[maybe_unused]] long launcher_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"})
    if (const long n = env_number(name); n > 0) return n;
  return env_number("PMIX_RANK") > 0 ? 2 : 1;
}

}  // namespace

std::unique_ptr<Communicator> make_local_communicator() { return std::make_unique<LocalCommunicator>(); }

bool built_with_mpi() {
#ifdef WB_HAVE_MPI
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Communicator> make_process_communicator() {
  const char* choice = env("WB_DIST");
  if (choice && std::string(choice) == "local") return make_local_communicator();
  if (choice && std::string(choice) != "mpi")
    throw Error(std::string("WB_DIST must be 'local' or 'mpi', got '") + choice + "'");
  if (!started_by_launcher() && !choice) return make_local_communicator();
#ifdef WB_HAVE_MPI
  return make_mpi_communicator();
#else
  const long n = launcher_world_size();
  if (n > 1 || choice)
    throw Error("this process is one of " + std::to_string(n) +
                " started by mpirun or srun, but this build has no MPI: each would train alone and overwrite the "
                "others' output (install libopenmpi-dev and rebuild, or run one process)");
  return make_local_communicator();
#endif
}

}  // namespace engine
