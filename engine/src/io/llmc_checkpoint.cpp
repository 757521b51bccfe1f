// llm.c GPT-2 checkpoint reader/writer; layout in engine/io/llmc_checkpoint.h.
//
// Invariants the reader establishes before allocating anything: magic and version are known, every
// shape letter is in [1, 2^20] (GPT-2 XL is C = 1600, V = 50257: the cap leaves room while keeping the
// arithmetic below meaningful), channels divide into heads, padded_vocab >= vocab, all 16 tensor
// sizes and their byte total are computed with overflow-checked arithmetic, and the file holds
// exactly 1024 + total bytes — a truncated file and one with bytes appended are both refused. The
// allocation is therefore bounded by the file size (twice it for widened bf16).
#include "engine/io/llmc_checkpoint.h"

#include <bit>
#include <cstring>

#include "engine/checked.h"
#include "engine/dtype.h"
#include "engine/error.h"
#include "engine/io/mapped_file.h"

static_assert(std::endian::native == std::endian::little, "llm.c checkpoints are little-endian; add byte swaps");

namespace engine::io {

namespace {

constexpr int32_t k_magic = 20240326;
constexpr int32_t k_version_fp32 = 3;
constexpr int32_t k_version_bf16 = 5;
constexpr uint64_t k_header_ints = 256;
constexpr uint64_t k_header_bytes = k_header_ints * 4;
constexpr int64_t k_max_dim = int64_t{1} << 20;

constexpr const char* k_tensor_names[16] = {"wte",      "wpe",      "ln1w", "ln1b", "qkvw", "qkvb",
                                            "attprojw", "attprojb", "ln2w", "ln2b", "fcw",  "fcb",
                                            "fcprojw",  "fcprojb",  "lnfw", "lnfb"};

struct Shape {
  int64_t max_seq_len, vocab_size, num_layers, num_heads, channels, padded_vocab_size;
};

// Element counts of the 16 tensors, validating the shape letters first.
std::array<uint64_t, 16> tensor_sizes(const std::string& label, const Shape& s) {
  struct Field {
    const char* name;
    int index;  // in the int32 header
    int64_t value;
  };
  const Field fields[] = {{"max_seq_len", 2, s.max_seq_len}, {"vocab_size", 3, s.vocab_size},
                          {"num_layers", 4, s.num_layers},   {"num_heads", 5, s.num_heads},
                          {"channels", 6, s.channels},       {"padded_vocab_size", 7, s.padded_vocab_size}};
  for (const Field& f : fields)
    if (f.value < 1 || f.value > k_max_dim)
      throw Error(label + ": header[" + std::to_string(f.index) + "] " + f.name + " = " + std::to_string(f.value) +
                  " (byte " + std::to_string(f.index * 4) + ") must be in [1, " + std::to_string(k_max_dim) + "]");
  if (s.channels % s.num_heads != 0)
    throw Error(label + ": channels = " + std::to_string(s.channels) +
                " is not divisible by num_heads = " + std::to_string(s.num_heads));
  if (s.padded_vocab_size < s.vocab_size)
    throw Error(label + ": padded_vocab_size = " + std::to_string(s.padded_vocab_size) +
                " is smaller than vocab_size = " + std::to_string(s.vocab_size));

  const uint64_t Vp = s.padded_vocab_size, C = s.channels, T = s.max_seq_len, L = s.num_layers;
  const std::string what = label + ": parameter count";
  auto mul = [&](uint64_t a, uint64_t b) { return checked_mul(a, b, what.c_str()); };
  const uint64_t C3 = mul(3, C), C4 = mul(4, C);
  return {mul(Vp, C),         mul(T, C), mul(L, C), mul(L, C), mul(mul(L, C3), C), mul(L, C3),
          mul(mul(L, C), C),  mul(L, C), mul(L, C), mul(L, C), mul(mul(L, C4), C), mul(L, C4),
          mul(mul(L, C), C4), mul(L, C), C,         C};
}

int32_t read_i32_le(const uint8_t* p) {
  uint32_t v = uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
  return static_cast<int32_t>(v);
}

}  // namespace

LlmcCheckpoint read_llmc_checkpoint(const std::string& path) {
  auto file = MappedFile::open(path);
  const uint8_t* bytes = file->data();
  const uint64_t size = file->size();
  if (size < k_header_bytes)
    throw Error(path + ": file is " + std::to_string(size) + " bytes, smaller than the " +
                std::to_string(k_header_bytes) + "-byte llm.c header");

  const int32_t magic = read_i32_le(bytes);
  if (magic != k_magic)
    throw Error(path + ": header[0] magic = " + std::to_string(magic) + " (byte 0), expected " +
                std::to_string(k_magic) + ": not an llm.c GPT-2 checkpoint");
  const int32_t version = read_i32_le(bytes + 4);
  if (version != k_version_fp32 && version != k_version_bf16)
    throw Error(path + ": header[1] version = " + std::to_string(version) +
                " (byte 4) is not supported (3 = fp32, 5 = bf16)");

  const Shape shape{read_i32_le(bytes + 8),  read_i32_le(bytes + 12), read_i32_le(bytes + 16),
                    read_i32_le(bytes + 20), read_i32_le(bytes + 24), read_i32_le(bytes + 28)};
  const std::array<uint64_t, 16> counts = tensor_sizes(path, shape);
  const uint64_t elem_bytes = version == k_version_fp32 ? 4 : 2;
  const std::string what = path + ": checkpoint size";
  uint64_t total = 0;
  for (uint64_t n : counts) total = checked_add(total, n, what.c_str());
  const uint64_t expected = checked_add(k_header_bytes, checked_mul(total, elem_bytes, what.c_str()), what.c_str());
  if (size != expected)
    throw Error(path + ": file is " + std::to_string(size) + " bytes but its header implies " +
                std::to_string(expected) + " (" + std::to_string(total) + " parameters, " +
                (version == k_version_fp32 ? "fp32" : "bf16") + ")" +
                (size < expected ? ": truncated" : ": trailing bytes after the last tensor"));

  LlmcCheckpoint ckpt;
  ckpt.max_seq_len = static_cast<int>(shape.max_seq_len);
  ckpt.vocab_size = static_cast<int>(shape.vocab_size);
  ckpt.padded_vocab_size = static_cast<int>(shape.padded_vocab_size);
  ckpt.num_layers = static_cast<int>(shape.num_layers);
  ckpt.num_heads = static_cast<int>(shape.num_heads);
  ckpt.channels = static_cast<int>(shape.channels);

  const uint8_t* p = bytes + k_header_bytes;
  for (size_t i = 0; i < 16; ++i) {
    const size_t n = checked_cast<size_t>(counts[i], what.c_str());
    std::vector<float>& t = ckpt.tensors[i];
    t.resize(n);
    if (version == k_version_fp32) {
      if (n > 0) std::memcpy(t.data(), p, n * 4);
    } else {
      for (size_t j = 0; j < n; ++j) {
        uint16_t h;
        std::memcpy(&h, p + 2 * j, 2);
        t[j] = bf16_to_f32(h);
      }
    }
    p += n * elem_bytes;
  }
  return ckpt;
}

void write_llmc_checkpoint(const std::string& path, const LlmcCheckpoint& ckpt) {
  const Shape shape{ckpt.max_seq_len, ckpt.vocab_size, ckpt.num_layers,
                    ckpt.num_heads,   ckpt.channels,   ckpt.padded_vocab_size};
  const std::array<uint64_t, 16> counts = tensor_sizes(path, shape);
  for (size_t i = 0; i < 16; ++i)
    if (ckpt.tensors[i].size() != counts[i])
      throw Error(path + ": tensor " + std::to_string(i) + " (" + k_tensor_names[i] + ") has " +
                  std::to_string(ckpt.tensors[i].size()) + " values, the shape needs " + std::to_string(counts[i]));

  std::array<int32_t, k_header_ints> header{};
  header[0] = k_magic;
  header[1] = k_version_fp32;
  header[2] = ckpt.max_seq_len;
  header[3] = ckpt.vocab_size;
  header[4] = ckpt.num_layers;
  header[5] = ckpt.num_heads;
  header[6] = ckpt.channels;
  header[7] = ckpt.padded_vocab_size;

  std::vector<WritePart> parts;
  parts.push_back(WritePart{header.data(), k_header_bytes});
  for (const std::vector<float>& t : ckpt.tensors)
    if (!t.empty()) parts.push_back(WritePart{t.data(), t.size() * sizeof(float)});
  write_file_atomic(path, parts);
}

}  // namespace engine::io
