#include "decode_traffic.h"

#include "engine/dtype.h"

namespace wb::cli {

DecodeTraffic decode_traffic(const engine::Model& model, int n_gen, int parallel) {
  const engine::ModelConfig& cfg = model.config();
  uint64_t weight_bytes = 0;
  for (const engine::ParamTensor& p : model.params()) {
    const uint64_t layers = p.shape.size() == 3 ? static_cast<uint64_t>(p.shape[0]) : 1;
    const uint64_t per_layer = p.numel / layers;
    const bool lookup_only = p.name == "wpe" || (p.name == "wte" && !cfg.tie_embeddings);
    const uint64_t row = static_cast<uint64_t>(p.shape.back());
    const engine::QuantWeight* q = p.external ? model.quant_weight(p.name) : nullptr;
    for (uint64_t l = 0; l < layers; ++l) {
      const engine::DType dt = q ? q->layers[l].dtype : engine::DType::F32;
      weight_bytes += engine::dtype_bytes(dt, lookup_only ? row : per_layer);
    }
  }
  DecodeTraffic t;
  t.weight_bytes = static_cast<double>(weight_bytes) / parallel;
  const double kv_row_bytes = 2.0 * cfg.n_layer * cfg.kv_width() * sizeof(float);
  t.kv_bytes = kv_row_bytes * (n_gen + 1) / 2.0;
  return t;
}

}  // namespace wb::cli
