// EngineWorker: model loading and raw generation on the worker thread.
#include "engineworker.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QRandomGenerator>

#include <new>

#include "engine/backend.h"
#include "engine/error.h"
#include "engine/generator.h"
#include "engine/model.h"
#include "engine/model_loader.h"

namespace {

// About one screen refresh: fast enough to look live, slow enough not to flood the GUI thread.
constexpr qint64 kTokenFlushMs = 16;

QString formatName(engine::ModelFormat f) {
  switch (f) {
    case engine::ModelFormat::HfDirectory: return QObject::tr("Hugging Face safetensors");
    case engine::ModelFormat::LlmcCheckpoint: return QObject::tr("llm.c checkpoint");
    case engine::ModelFormat::Gguf: return QObject::tr("GGUF");
  }
  return QObject::tr("unknown");
}

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// The engine's reason reads "CPU: no CUDA device found"; the UI shows the name separately.
QString reasonWithoutName(const QString& reason, const QString& name) {
  const QString prefix = name + QLatin1Char(':');
  return reason.startsWith(prefix) ? reason.mid(prefix.size()).trimmed() : reason;
}

}  // namespace

EngineWorker::EngineWorker(QObject* parent) : QObject(parent) {
  qRegisterMetaType<ModelInfo>();
  qRegisterMetaType<GenerationSettings>();
  qRegisterMetaType<GenerationStats>();
}

EngineWorker::~EngineWorker() = default;

void EngineWorker::ensureBackend(int threads) {
  if (m_backend && m_backendThreads == threads) return;
  m_generator.reset();  // it holds a reference to the backend it was built with
  engine::BackendChoice choice = engine::choose_backend(engine::BackendPreference::Auto, threads);
  m_backend = std::move(choice.backend);
  m_backendThreads = threads;
  const QString name = fromStd(m_backend->name());
  Q_EMIT backendChanged(name, reasonWithoutName(fromStd(choice.reason), name), fromStd(m_backend->description()));
}

void EngineWorker::prepareBackend(int threads) {
  try {
    ensureBackend(threads);
  } catch (const std::exception& e) {
    Q_EMIT backendFailed(tr("Could not start the compute backend: %1").arg(fromStd(e.what())));
  }
}

void EngineWorker::loadModel(const QString& path, int threads, quint64 ticket) {
  if (ticket == 0) ticket = m_loadGate.issue();
  if (m_loadGate.isCancelled(ticket)) {
    Q_EMIT loadCancelled(path);
    return;
  }
  Q_EMIT loadStarted(path);

  const QString cleanPath = QDir::cleanPath(path);
  if (cleanPath.isEmpty() || !QFileInfo::exists(cleanPath)) {
    Q_EMIT loadFailed(tr("Cannot open “%1”: no such file or folder.").arg(path));
    return;
  }

  QElapsedTimer timer;
  timer.start();
  try {
    ensureBackend(threads);
    const engine::ModelFileInfo fileInfo = engine::detect_model_format(cleanPath.toStdString());
    auto progress = [&](float fraction, const std::string& stage) {
      if (m_loadGate.isCancelled(ticket)) return false;
      Q_EMIT loadProgress(static_cast<double>(fraction), fromStd(stage));
      // Checked again so a cancel issued while the signal was delivered takes effect at once.
      return !m_loadGate.isCancelled(ticket);
    };
    std::unique_ptr<engine::Model> model = engine::load_model(cleanPath.toStdString(), progress);

    // Only now replace the old model: the generator refers to it, so it goes first.
    m_generator.reset();
    m_model = std::move(model);
    m_info = ModelInfo::fromModel(*m_model, cleanPath, formatName(fileInfo.format));
    m_info.loadMilliseconds = timer.elapsed();
    Q_EMIT modelLoaded(m_info);
  } catch (const engine::Cancelled&) {
    Q_EMIT loadCancelled(path);
  } catch (const std::bad_alloc&) {
    Q_EMIT loadFailed(tr("Not enough memory to load “%1”.").arg(path));
  } catch (const std::exception& e) {
    Q_EMIT loadFailed(fromStd(e.what()));
  }
}

void EngineWorker::generate(const QString& prompt, const GenerationSettings& settings, quint64 ticket) {
  if (ticket == 0) ticket = m_generationGate.issue();
  if (!m_model || !m_backend) {
    Q_EMIT generationFailed(tr("No model is loaded. Open one on the Models page."));
    return;
  }
  const engine::Tokenizer* tokenizer = m_model->tokenizer();
  if (!tokenizer) {
    Q_EMIT generationFailed(
        tr("“%1” has no tokenizer (tokenizer.json, or vocab.json and merges.txt, beside the weights), so it cannot "
           "turn text into tokens.")
            .arg(m_info.name));
    return;
  }

  try {
    std::vector<int32_t> ids = tokenizer->encode(prompt.toStdString());
    if (ids.empty()) {
      // An empty prompt means "write anything": start from the document boundary token.
      if (auto boundary = tokenizer->bos_id() ? tokenizer->bos_id() : tokenizer->eos_id()) ids.push_back(*boundary);
    }
    if (ids.empty()) {
      Q_EMIT generationFailed(tr("Type a prompt first: this model has no start-of-text token to begin from."));
      return;
    }
    if (!m_generator) m_generator = std::make_unique<engine::Generator>(*m_model, *m_backend);

    engine::GenerateParams params;
    params.max_tokens = settings.maxTokens;
    params.sampler.temperature = static_cast<float>(settings.temperature);
    params.sampler.top_k = settings.topK;
    params.sampler.top_p = static_cast<float>(settings.topP);
    params.sampler.seed = settings.seed >= 0 ? static_cast<uint64_t>(settings.seed) : QRandomGenerator::global()->generate64();

    Q_EMIT generationStarted();
    std::string pending;
    bool emittedAny = false;
    QElapsedTimer sinceFlush;
    sinceFlush.start();
    auto flush = [&] {
      if (pending.empty()) return;
      Q_EMIT tokenGenerated(fromStd(pending));
      pending.clear();
      emittedAny = true;
      sinceFlush.restart();
    };
    const engine::GenerationResult result =
        m_generator->generate(ids, params, [&](const engine::GeneratedToken&, const std::string& text) {
          pending += text;
          // The first piece goes out at once: the time to first token is what people notice.
          if (!emittedAny || sinceFlush.elapsed() >= kTokenFlushMs) flush();
          return !m_generationGate.isCancelled(ticket);
        });
    flush();

    GenerationStats stats;
    stats.promptTokens = result.stats.prompt_tokens;
    stats.generatedTokens = result.stats.generated_tokens;
    stats.prefillTokensPerSecond = result.stats.prefill_tokens_per_s();
    stats.decodeTokensPerSecond = result.stats.decode_tokens_per_s();
    stats.timeToFirstTokenMs = result.stats.time_to_first_token_ms;
    stats.finishReason = QString::fromLatin1(engine::finish_reason_name(result.finish));
    stats.seed = params.sampler.seed;
    Q_EMIT generationFinished(stats);
  } catch (const std::bad_alloc&) {
    Q_EMIT generationFailed(tr("Not enough memory to generate with this prompt."));
  } catch (const std::exception& e) {
    Q_EMIT generationFailed(fromStd(e.what()));
  }
}
