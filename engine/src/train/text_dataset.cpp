// Plain-text data set and the token-stream loader: see engine/train/text_dataset.h.
#include "engine/train/text_dataset.h"

#include <cmath>

#include "engine/checked.h"
#include "engine/error.h"
#include "engine/tokenizer.h"
#include "train/data_file.h"

namespace engine {

TextDataset load_text_dataset(const std::string& path, const Tokenizer& tokenizer, double val_fraction) {
  if (!(val_fraction >= 0.0 && val_fraction < 1.0))
    throw Error(path + ": the validation fraction must be in [0, 1), got " + std::to_string(val_fraction));
  const std::string text = read_data_file(path);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw Error(path + ": the data file is empty");
  require_utf8_text(text, path);
  std::vector<int32_t> ids = tokenizer.encode(text, /*allow_special=*/false);
  TextDataset d;
  const size_t n_val = static_cast<size_t>(std::floor(double(ids.size()) * val_fraction));
  d.val.assign(ids.end() - static_cast<std::ptrdiff_t>(n_val), ids.end());
  ids.resize(ids.size() - n_val);
  d.train = std::move(ids);
  return d;
}

TokenStreamLoader::TokenStreamLoader(std::vector<int32_t> tokens, int B, int T, bool shuffle, uint64_t seed,
                                     const std::string& label)
    : m_tokens(std::move(tokens)), m_B(B), m_T(T), m_shuffle(shuffle) {
  if (B < 1 || T < 1) throw Error(label + ": batch size and sequence length must be >= 1");
  const uint64_t need = checked_add(checked_mul(uint64_t(B), uint64_t(T), "batch tokens"), 1, "batch tokens");
  if (m_tokens.size() < need)
    throw Error(label + ": " + std::to_string(m_tokens.size()) + " tokens cannot fill one batch of " +
                std::to_string(B) + " x " + std::to_string(T) + " (needs " + std::to_string(need) +
                "); use more text or a smaller --batch / --seq");
  if (shuffle) m_windows.emplace((m_tokens.size() - 1) / uint64_t(T), B, true, seed, label);
}

void TokenStreamLoader::next(Batch& batch) {
  const size_t BT = size_t(m_B) * size_t(m_T);
  batch.B = m_B;
  batch.T = m_T;
  batch.inputs.resize(BT);
  batch.targets.resize(BT);
  batch.weights.clear();
  if (!m_shuffle) {
    const int32_t* src = m_tokens.data() + m_pos.cursor;
    for (size_t i = 0; i < BT; ++i) {
      batch.inputs[i] = src[i];
      batch.targets[i] = src[i + 1];
    }
    m_pos.cursor += BT;
    if (m_pos.cursor + BT + 1 > m_tokens.size()) {
      m_pos.cursor = 0;
      ++m_pos.epoch;
    }
    return;
  }
  m_windows->next(m_items);
  for (int b = 0; b < m_B; ++b) {
    const int32_t* src = m_tokens.data() + size_t(m_items[size_t(b)]) * size_t(m_T);
    for (int t = 0; t < m_T; ++t) {
      batch.inputs[size_t(b) * m_T + t] = src[t];
      batch.targets[size_t(b) * m_T + t] = src[t + 1];
    }
  }
}

void TokenStreamLoader::seek(const DataPosition& p) {
  if (m_shuffle) return m_windows->seek(p);
  if (p.cursor + uint64_t(m_B) * uint64_t(m_T) + 1 > m_tokens.size())
    throw Error("data position " + std::to_string(p.cursor) + " lies outside this data set (" +
                std::to_string(m_tokens.size()) + " tokens): was the checkpoint made with other data or batch shape?");
  m_pos = p;
}

}  // namespace engine
