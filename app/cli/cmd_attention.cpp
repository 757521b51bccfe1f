// `attention`: the post-softmax attention of every layer x head over a prompt (DESIGN.md §5):
// {"ids","tokens","attention":[layer][head][query][key]}; --layer / --head narrow it (0-based; --head
// also takes mean or max over the layer's heads), and --png draws the chosen matrices as a heatmap grid
// (layers down, heads across) in the app's colour scale.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>

#include <QImage>
#include <QSaveFile>
#include <QString>

#include "cli_args.h"
#include "commands.h"
#include "engine/error.h"
#include "engine/inspect/colormap.h"
#include "engine/inspect/top_k.h"
#include "inspect_common.h"

namespace wb::cli {

namespace {

// One (T, T) matrix chosen by --layer / --head.
struct Selection {
  std::vector<int> layers;
  std::optional<engine::HeadReduce> reduce;  // set: one reduced matrix per layer instead of heads
  std::vector<int> heads;
};

Selection select(const Args& a, const engine::Inspection& in) {
  Selection s;
  if (a.has("layer")) {
    s.layers = {static_cast<int>(a.integer("layer", 0, 0, in.n_layer - 1))};
  } else {
    for (int l = 0; l < in.n_layer; ++l) s.layers.push_back(l);
  }
  const std::string head = a.str("head");
  if (head == "mean") s.reduce = engine::HeadReduce::Mean;
  else if (head == "max") s.reduce = engine::HeadReduce::Max;
  else if (a.has("head")) s.heads = {static_cast<int>(a.integer("head", 0, 0, in.n_head - 1))};
  else
    for (int h = 0; h < in.n_head; ++h) s.heads.push_back(h);
  return s;
}

// The chosen matrices as [layer][head] (one pseudo-head when reduced).
std::vector<std::vector<std::vector<float>>> matrices(const engine::Inspection& in, const Selection& s) {
  std::vector<std::vector<std::vector<float>>> out;
  for (int l : s.layers) {
    auto& row = out.emplace_back();
    if (s.reduce) {
      row.push_back(engine::reduce_heads(in, l, *s.reduce));
    } else {
      for (int h : s.heads) {
        const auto m = in.head_matrix(l, h);
        row.emplace_back(m.begin(), m.end());
      }
    }
  }
  return out;
}

nlohmann::json matrix_json(const std::vector<float>& m, int T) {
  nlohmann::json rows = nlohmann::json::array();
  for (int q = 0; q < T; ++q) rows.push_back(std::vector<float>(m.begin() + q * T, m.begin() + (q + 1) * T));
  return rows;
}

void write_png(const std::string& path, const std::vector<std::vector<std::vector<float>>>& grid, int T) {
  // Cells of at least 1 px, at most 8, so a 512-token matrix is 512 px and a short one still readable.
  const int cell = std::clamp(512 / T, 1, 8), gap = 4, side = cell * T;
  const int rows = static_cast<int>(grid.size()), cols = static_cast<int>(grid.front().size());
  QImage img(cols * side + (cols + 1) * gap, rows * side + (rows + 1) * gap, QImage::Format_RGB32);
  if (img.isNull()) throw engine::Error(path + ": the image would be too large");
  img.fill(qRgb(255, 255, 255));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const std::vector<float>& m = grid[r][c];
      const int x0 = gap + c * (side + gap), y0 = gap + r * (side + gap);
      for (int q = 0; q < T; ++q)
        for (int k = 0; k < T; ++k) {
          const engine::Rgb col = engine::viridis(m[static_cast<size_t>(q) * T + k]);
          for (int dy = 0; dy < cell; ++dy) {
            auto* line = reinterpret_cast<QRgb*>(img.scanLine(y0 + q * cell + dy));
            for (int dx = 0; dx < cell; ++dx) line[x0 + k * cell + dx] = qRgb(col.r, col.g, col.b);
          }
        }
    }
  QSaveFile f(QString::fromStdString(path));
  if (!f.open(QIODevice::WriteOnly)) throw engine::Error(path + ": cannot write: " + f.errorString().toStdString());
  if (!img.save(&f, "PNG") || !f.commit())
    throw engine::Error(path + ": writing the PNG failed: " + f.errorString().toStdString());
}

}  // namespace

int cmd_attention(int argc, char** argv) {
  static const std::vector<FlagSpec> flags = inspect_flags({
      {"layer", true, false, "only this layer (0-based)"},
      {"head", true, false, "only this head (0-based), or mean / max over the layer's heads"},
      {"json", false, false, "print {\"ids\",\"tokens\",\"attention\":[layer][head][query][key]}"},
      {"png", true, false, "write the chosen matrices as a heatmap PNG (layers down, heads across)"},
  });
  const Args a(flags, argc, argv, 2);
  if (a.has("head")) {
    const std::string h = a.str("head");
    if (h != "mean" && h != "max" && (h.empty() || h.find_first_not_of("0123456789") != std::string::npos))
      throw UsageError("--head must be a head number, mean or max, got '" + h + "'");
  }
  if (a.has("layer")) a.integer("layer", 0, 0, 1 << 20);
  engine::InspectOptions options;
  options.lens = false;
  options.top_k = 1;
  const InspectRun run = run_inspection(a, options);
  const engine::Inspection& in = run.inspection;
  const Selection sel = select(a, in);
  const auto grid = matrices(in, sel);
  const int T = in.T;

  if (a.has("png")) write_png(a.str("png"), grid, T);
  if (a.has("json")) {
    nlohmann::json att;
    const bool one_layer = a.has("layer"), one_head = a.has("head");
    if (one_layer && one_head) {
      att = matrix_json(grid[0][0], T);
    } else if (one_layer || one_head) {  // [head][q][k] of the layer, or [layer][q][k] of the head
      att = nlohmann::json::array();
      if (one_layer)
        for (const auto& m : grid[0]) att.push_back(matrix_json(m, T));
      else
        for (const auto& row : grid) att.push_back(matrix_json(row[0], T));
    } else {
      att = nlohmann::json::array();
      for (const auto& row : grid) {
        nlohmann::json heads = nlohmann::json::array();
        for (const auto& m : row) heads.push_back(matrix_json(m, T));
        att.push_back(std::move(heads));
      }
    }
    print_json({{"ids", in.ids},
                {"tokens", token_texts(in)},
                {"n_layer", in.n_layer},
                {"n_head", in.n_head},
                {"attention", std::move(att)}});
    return 0;
  }
  // Text: for each query token, the keys it attends to most in one matrix (default: the last layer,
  // mean over its heads).
  const int layer = a.has("layer") ? sel.layers[0] : in.n_layer - 1;
  const std::vector<float> m =
      sel.reduce || !a.has("head")
          ? engine::reduce_heads(in, layer, sel.reduce.value_or(engine::HeadReduce::Mean))
          : std::vector<float>(in.head_matrix(layer, sel.heads[0]).begin(), in.head_matrix(layer, sel.heads[0]).end());
  std::cout << "layer " << layer << ", "
            << (a.has("head") && !sel.reduce ? "head " + std::to_string(sel.heads[0])
                                             : a.str("head", "mean") + " of heads")
            << ": each token and the tokens it attends to most\n";
  auto quoted = [&](int32_t id) { return quoted_piece(in, id); };
  for (int q = 0; q < T; ++q) {
    std::cout << q << "\t" << quoted(in.ids[q]) << "\t->";
    const std::span<const float> row(m.data() + static_cast<size_t>(q) * T, static_cast<size_t>(q) + 1);
    for (int32_t k : engine::top_k_indices(row, 3))
      std::cout << "  " << k << " " << quoted(in.ids[k]) << " " << percent(row[k]);
    std::cout << "\n";
  }
  if (a.has("png")) std::cout << "wrote " << a.str("png") << "\n";
  std::cout.flush();
  return 0;
}

}  // namespace wb::cli
