// The communicator over MPI (Open MPI, MPICH): MPI's world, its rank and size from MPI itself, so the same binary
// runs under mpirun and under srun. Compiled only when CMake found MPI (WB_HAVE_MPI).
//
// Waiting ranks yield their core (Open MPI's mpi_yield_when_idle, unless the environment sets it): on a machine whose
// cores the ranks' own compute threads or other jobs share, a rank spinning in a wait steals the time of the rank
// it waits for -- measured here, 2 ranks on 2 busy cores: 3 s per gradient exchange spinning, under 1 ms yielding.
// A cluster with a core per rank to spare can set OMPI_MCA_mpi_yield_when_idle=0.
//
// Errors are returned, not fatal (MPI_ERRORS_RETURN on our own duplicate of the world), and become engine::Error.
// Counts above INT_MAX elements are sent in pieces: MPI counts are ints.
// The C API only: the deprecated C++ bindings that mpi.h would pull in are not used (and do not compile warning-free).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "dist/communicator_mpi.h"
#include "engine/error.h"

namespace engine {

namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(std::string("MPI ") + what + " failed: " + std::string(text, size_t(len)));
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
      setenv("OMPI_MCA_mpi_yield_when_idle", "1", /*overwrite=*/0);
      int provided = 0;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "initialisation");
      m_owns_mpi = true;
    }
    check(MPI_Comm_dup(MPI_COMM_WORLD, &m_comm), "Comm_dup");
    MPI_Comm_set_errhandler(m_comm, MPI_ERRORS_RETURN);
    check(MPI_Comm_rank(m_comm, &m_rank), "Comm_rank");
    check(MPI_Comm_size(m_comm, &m_size), "Comm_size");
    MPI_Comm node;
    check(MPI_Comm_split_type(m_comm, MPI_COMM_TYPE_SHARED, m_rank, MPI_INFO_NULL, &node), "Comm_split_type");
    check(MPI_Comm_size(node, &m_local), "Comm_size");
    MPI_Comm_free(&node);
  }

  ~MpiCommunicator() override {
    if (!m_pending.empty()) MPI_Waitall(int(m_pending.size()), m_pending.data(), MPI_STATUSES_IGNORE);
    MPI_Comm_free(&m_comm);
    if (m_owns_mpi) MPI_Finalize();
  }

  int rank() const override { return m_rank; }
  int world_size() const override { return m_size; }
  int local_size() const override { return m_local; }
  std::string backend_name() const override { return "mpi"; }

  void allreduce_sum(float* data, size_t n) override { sum(data, n, MPI_FLOAT); }
  void allreduce_sum(double* data, size_t n) override { sum(data, n, MPI_DOUBLE); }

  void start_allreduce_sum(float* data, size_t n) override {
    for (size_t done = 0; done < n;) {
      const int count = int(std::min<size_t>(n - done, INT_MAX));
      MPI_Request r;
      check(MPI_Iallreduce(MPI_IN_PLACE, data + done, count, MPI_FLOAT, MPI_SUM, m_comm, &r), "Iallreduce");
      m_pending.push_back(r);
      done += size_t(count);
    }
  }

  void wait_all() override {
    if (m_pending.empty()) return;
    const int rc = MPI_Waitall(int(m_pending.size()), m_pending.data(), MPI_STATUSES_IGNORE);
    m_pending.clear();
    check(rc, "Waitall");
  }

  // In place, MPI_Reduce_scatter leaves this rank's block at the START of the buffer; it is moved to where the
  // caller keeps it (the interface's layout: block r at the sum of the counts before it).
  void reduce_scatter_sum(float* data, std::span<const size_t> counts) override {
    const std::vector<int> c = block_counts(counts, nullptr);
    check(MPI_Reduce_scatter(MPI_IN_PLACE, data, c.data(), MPI_FLOAT, MPI_SUM, m_comm), "Reduce_scatter");
    size_t offset = 0;
    for (int r = 0; r < m_rank; ++r) offset += counts[size_t(r)];
    if (offset > 0 && counts[size_t(m_rank)] > 0)
      std::memmove(data + offset, data, counts[size_t(m_rank)] * sizeof(float));
  }

  void allgather(float* data, std::span<const size_t> counts) override {
    std::vector<int> displs;
    const std::vector<int> c = block_counts(counts, &displs);
    check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, c.data(), displs.data(), MPI_FLOAT, m_comm),
          "Allgatherv");
  }

  bool any(bool flag) override {
    int v = flag ? 1 : 0;
    check(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_LOR, m_comm), "Allreduce");
    return v != 0;
  }

  void barrier() override { check(MPI_Barrier(m_comm), "Barrier"); }

  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; this satisfies [[noreturn]] should an implementation do so
  }

 private:
  template <typename T>
  void sum(T* data, size_t n, MPI_Datatype type) {
    for (size_t done = 0; done < n;) {
      const int count = int(std::min<size_t>(n - done, INT_MAX));
      check(MPI_Allreduce(MPI_IN_PLACE, data + done, count, type, MPI_SUM, m_comm), "Allreduce");
      done += size_t(count);
    }
  }

  // MPI's int counts (and displacements) of the blocks; the callers cut their buffers into pieces well below INT_MAX.
  std::vector<int> block_counts(std::span<const size_t> counts, std::vector<int>* displs) const {
    if (counts.size() != size_t(m_size))
      throw Error("MPI: " + std::to_string(counts.size()) + " block counts for " + std::to_string(m_size) + " ranks");
    std::vector<int> c(counts.size());
    size_t total = 0;
    if (displs) displs->resize(counts.size());
    for (size_t r = 0; r < counts.size(); ++r) {
      if (displs) (*displs)[r] = int(total);
      total += counts[r];
      if (counts[r] > size_t(INT_MAX) || total > size_t(INT_MAX))
        throw Error("MPI: a collective of " + std::to_string(total) + "+ floats exceeds MPI's int counts");
      c[r] = int(counts[r]);
    }
    return c;
  }

  MPI_Comm m_comm = MPI_COMM_NULL;
  int m_rank = 0, m_size = 1, m_local = 1;
  bool m_owns_mpi = false;
  std::vector<MPI_Request> m_pending;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator() { return std::make_unique<MpiCommunicator>(); }

}  // namespace engine
