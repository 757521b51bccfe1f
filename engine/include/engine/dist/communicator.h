// The processes of one data-parallel run and the collective operations among them. The trainer talks only to
// this interface, never to MPI itself, so a run of one process (the app, a plain CLI call) needs no MPI at all,
// the build does not need MPI, and a GPU implementation (NCCL) can come beside the MPI one later.
//
// Invariants:
//   - every collective (allreduce_sum, start_allreduce_sum + wait_all, reduce_scatter_sum, allgather, barrier, any)
//     must be called by every rank, in the same order, with the same element counts; a rank that skips one leaves
//     the others waiting;
//   - sums are exact for one process (the data is left as it is), so a one-process run computes bit for bit what
//     it computed before data parallelism existed;
//   - only the thread that created the communicator calls it (MPI is initialised with MPI_THREAD_FUNNELED).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace engine {

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // Ranks of this run on this machine: they share its cores (threads per rank = cores / local_size()).
  virtual int local_size() const = 0;
  virtual std::string backend_name() const = 0;  // "local", "mpi"

  // In place: data[i] becomes the sum of data[i] over all ranks. Throws engine::Error when the transport fails.
  virtual void allreduce_sum(float* data, size_t n) = 0;
  virtual void allreduce_sum(double* data, size_t n) = 0;
  // The same, started now and finished by wait_all(); data must not be read or written until then. Several may be
  // in flight at once (gradient buckets).
  virtual void start_allreduce_sum(float* data, size_t n) = 0;
  virtual void wait_all() = 0;
  // ZeRO's two exchanges (engine/train/zero_shard.h), in place over a buffer of world_size() consecutive blocks,
  // block r being counts[r] floats long (counts has world_size() entries; every rank passes the same counts):
  //   reduce_scatter_sum: afterwards this rank's block holds the sum of that block over all ranks; the other blocks
  //   hold unspecified values (the transport may use them as scratch);
  //   allgather: this rank's block is its contribution; afterwards every block holds its owner's contribution.
  // A block may be empty. Throws engine::Error when the transport fails or a count exceeds what it can address.
  virtual void reduce_scatter_sum(float* data, std::span<const size_t> counts) = 0;
  virtual void allgather(float* data, std::span<const size_t> counts) = 0;
  // True on every rank when `flag` is true on at least one (a stop request, a failed check).
  virtual bool any(bool flag) = 0;
  virtual void barrier() = 0;

  // Ends every process of the run with exit status `code`. A rank that fails alone must call this: the others
  // would otherwise wait for it in their next collective forever.
  [[noreturn]] virtual void abort(int code) = 0;
};

// Rank 0 of a world of 1.
std::unique_ptr<Communicator> make_local_communicator();

// The communicator of this process: MPI's world when a launcher started it (mpirun / mpiexec, or srun with PMI or
// PMIx; seen in the environment the launcher sets), else the local one. WB_DIST=local forces the local one.
// Throws engine::Error when a launcher started several processes but this build has no MPI: they would each train
// alone and overwrite one another's output.
std::unique_ptr<Communicator> make_process_communicator();

// Whether this build can run data-parallel over MPI (CMake found MPI).
bool built_with_mpi();

}  // namespace engine
