// Read-only whole-file mapping and crash-safe atomic file writes (POSIX); see mapped_file.h.
//
// write_file_atomic's sequence is the one that survives power loss on ext4/xfs/btrfs: write the
// full contents to a new file in the SAME directory (rename is atomic only within one filesystem),
// fsync it (else the rename can reach the disk before the data and leave a zero-length file), rename
// over the destination, then fsync the directory so the rename itself is durable. Until the rename
// the destination is untouched, so every failure before it leaves the old file intact; the temp file
// is unlinked on every failure path.
#include "engine/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "engine/checked.h"
#include "engine/error.h"

namespace engine::io {

namespace {

std::string errno_text(int err) { return std::strerror(err); }

// Closes a descriptor on scope exit unless released; keeps every early-return path leak-free.
class FdGuard {
 public:
  explicit FdGuard(int fd) : m_fd(fd) {}
  ~FdGuard() {
    if (m_fd >= 0) ::close(m_fd);
  }
  FdGuard(const FdGuard&) = delete;
  FdGuard& operator=(const FdGuard&) = delete;
  int get() const { return m_fd; }
  int release() {
    const int fd = m_fd;
    m_fd = -1;
    return fd;
  }

 private:
  int m_fd;
};

// Something valid to point at for an empty file: callers may memcpy(dst, data(), 0).
const uint8_t k_empty_byte = 0;

std::pair<std::string, std::string> split_dir_base(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  if (slash == 0) return {"/", path.substr(1)};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

// Creates a fresh temp file beside `path`; O_EXCL so two writers (or a stale leftover) never share one.
int create_temp_beside(const std::string& path, std::string& temp_path) {
  static std::atomic<uint64_t> counter{0};
  const auto [dir, base] = split_dir_base(path);
  const uint64_t salt = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (int attempt = 0; attempt < 100; ++attempt) {
    const uint64_t n = counter.fetch_add(1) ^ (salt << 8);
    temp_path = (dir == "/" ? std::string("/") : dir + "/") + "." + base + ".tmp-" + std::to_string(::getpid()) + "-" +
                std::to_string(n);
    const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST) throw Error(path + ": cannot create temporary file '" + temp_path + "': " + errno_text(errno));
  }
  throw Error(path + ": cannot create a unique temporary file in '" + dir + "'");
}

void write_all(int fd, const uint8_t* p, uint64_t n, const std::string& path, const std::string& temp_path) {
  while (n > 0) {
    const size_t chunk = n > (1u << 30) ? (1u << 30) : static_cast<size_t>(n);
    const ssize_t w = ::write(fd, p, chunk);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw Error(path + ": writing temporary file '" + temp_path + "' failed: " + errno_text(errno));
    }
    if (w == 0) throw Error(path + ": writing temporary file '" + temp_path + "' made no progress");
    p += w;
    n -= static_cast<uint64_t>(w);
  }
}

}  // namespace

std::unique_ptr<MappedFile> MappedFile::open(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not hang the loader; it is refused below as not a regular file.
  const int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (raw < 0) throw Error(path + ": cannot open: " + errno_text(errno));
  FdGuard fd(raw);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw Error(path + ": cannot stat: " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
  if (st.st_size < 0) throw Error(path + ": negative file size");

  std::unique_ptr<MappedFile> f(new MappedFile());
  f->m_size = static_cast<uint64_t>(st.st_size);
  if (f->m_size == 0) {  // mmap refuses length 0
    f->m_data = &k_empty_byte;
    return f;
  }
  const size_t len = checked_cast<size_t>(f->m_size, "mapped file size");
  void* p = ::mmap(nullptr, len, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (p == MAP_FAILED) throw Error(path + ": cannot map " + std::to_string(f->m_size) + " bytes: " + errno_text(errno));
  f->m_map = p;
  f->m_data = static_cast<const uint8_t*>(p);
  return f;  // the mapping outlives the descriptor
}

MappedFile::~MappedFile() {
  if (m_map != nullptr) ::munmap(m_map, static_cast<size_t>(m_size));
}

void write_file_atomic(const std::string& path, const void* data, uint64_t size) {
  write_file_atomic(path, std::vector<WritePart>{WritePart{data, size}});
}

void write_file_atomic(const std::string& path, const std::vector<WritePart>& parts) {
  if (path.empty() || path.back() == '/') throw Error("write_file_atomic: '" + path + "' is not a file path");
  for (const WritePart& part : parts)
    if (part.data == nullptr && part.size > 0) throw Error(path + ": write_file_atomic: null data with nonzero size");

  // Keep the permission bits of a file we replace (as QSaveFile does); new files get 0666 & ~umask.
  struct stat old_st {};
  const bool had_old = ::stat(path.c_str(), &old_st) == 0 && S_ISREG(old_st.st_mode);

  std::string temp_path;
  FdGuard fd(create_temp_beside(path, temp_path));
  try {
    if (had_old) (void)::fchmod(fd.get(), old_st.st_mode & 07777);  // best effort: not worth failing over
    for (const WritePart& part : parts)
      write_all(fd.get(), static_cast<const uint8_t*>(part.data), part.size, path, temp_path);
    if (::fsync(fd.get()) != 0)
      throw Error(path + ": fsync of temporary file '" + temp_path + "' failed: " + errno_text(errno));
    // close() can report deferred write errors (NFS, quota); only a clean close may replace the file.
    if (::close(fd.release()) != 0)
      throw Error(path + ": closing temporary file '" + temp_path + "' failed: " + errno_text(errno));
    if (::rename(temp_path.c_str(), path.c_str()) != 0)
      throw Error(path + ": cannot rename temporary file '" + temp_path + "' over it: " + errno_text(errno));
  } catch (...) {
    ::unlink(temp_path.c_str());
    throw;
  }

  // The new contents are in place; make the rename durable. Some filesystems cannot fsync a
  // directory (EINVAL); there is nothing more to do there.
  const std::string dir = split_dir_base(path).first;
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    throw Error(path + ": written, but cannot open directory '" + dir + "' to sync it: " + errno_text(errno));
  FdGuard dir_fd(dfd);
  if (::fsync(dir_fd.get()) != 0 && errno != EINVAL && errno != ENOTSUP)
    throw Error(path + ": written, but syncing directory '" + dir + "' failed: " + errno_text(errno));
}

void MappedFile::release(uint64_t offset, uint64_t length) const {
  if (!m_map || offset >= m_size) return;
  length = std::min(length, m_size - offset);
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t begin = (offset + page - 1) / page * page;
  const uint64_t end = (offset + length) / page * page;
  if (end > begin) ::madvise(const_cast<uint8_t*>(m_data) + begin, end - begin, MADV_DONTNEED);
}

}  // namespace engine::io
