// EngineWorker: model loading and raw generation on the worker thread.
#include "engineworker.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QRandomGenerator>

#include <algorithm>
#include <limits>
#include <new>
#include <stdexcept>

#include "engine/backend.h"
#include "engine/chat_template.h"
#include "engine/error.h"
#include "engine/generation_settings.h"
#include "engine/generator.h"
#include "engine/model.h"
#include "engine/model_loader.h"
#include "engine/tokenizer.h"
#include "logitbias.h"

namespace {

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

// A token's raw bytes for display: invalid or partial UTF-8 shown as \xNN, never silently lost.
QString displayBytes(const std::string& bytes) {
  const QString text = fromStd(bytes);
  if (!text.contains(QChar::ReplacementCharacter)) return text;
  QString out;
  for (unsigned char c : bytes)
    out += c < 0x80 ? QString(QChar(c)) : QStringLiteral("\\x%1").arg(c, 2, 16, QLatin1Char('0'));
  return out;
}

}  // namespace

EngineWorker::EngineWorker(QObject* parent) : QObject(parent) {
  qRegisterMetaType<ModelInfo>();
  qRegisterMetaType<GenerationSettings>();
  qRegisterMetaType<GenerationStats>();
  qRegisterMetaType<TokenRecord>();
  qRegisterMetaType<QList<TokenRecord>>();
  qRegisterMetaType<QList<int>>();
  qRegisterMetaType<ChatTurn>();
  qRegisterMetaType<QList<ChatTurn>>();
  qRegisterMetaType<InspectionPtr>();
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

std::vector<int32_t> EngineWorker::promptIds(const QString& prompt) const {
  const engine::Tokenizer* tokenizer = m_model->tokenizer();
  std::vector<int32_t> ids = tokenizer->encode(prompt.toStdString());
  if (ids.empty()) {
    // An empty prompt means "write anything": start from the document boundary token.
    if (auto boundary = tokenizer->bos_id() ? tokenizer->bos_id() : tokenizer->eos_id()) ids.push_back(*boundary);
  }
  return ids;
}

void EngineWorker::generate(const QString& prompt, const GenerationSettings& settings, quint64 ticket) {
  run([&] { return promptIds(prompt); }, {}, settings, ticket, Output::Tokens);
}

void EngineWorker::continueGeneration(const QString& prompt, const QList<int>& forcedIds,
                                      const GenerationSettings& settings, quint64 ticket) {
  run([&] { return promptIds(prompt); }, std::vector<int32_t>(forcedIds.begin(), forcedIds.end()), settings, ticket,
      Output::Tokens);
}

std::vector<int32_t> EngineWorker::chatIds(const QList<ChatTurn>& turns, const QString& continuation) const {
  std::vector<engine::ChatMessage> messages;
  messages.reserve(static_cast<size_t>(turns.size()));
  for (const ChatTurn& t : turns) messages.push_back({t.role.toStdString(), t.content.toStdString()});
  const engine::ChatTemplate& chatTemplate = m_model->chat_template();
  const engine::RenderedChat rendered = chatTemplate.render(messages, /*add_generation_prompt=*/true);
  std::vector<int32_t> ids = engine::encode_chat(*m_model->tokenizer(), rendered, messages);
  // The reply so far is content, never markup: special-token text in it stays text.
  if (!continuation.isEmpty()) {
    const std::vector<int32_t> more = m_model->tokenizer()->encode(continuation.toStdString(), /*allow_special=*/false);
    ids.insert(ids.end(), more.begin(), more.end());
  }
  return ids;
}

void EngineWorker::generateChat(const QList<ChatTurn>& turns, const QString& continuation,
                                const GenerationSettings& settings, quint64 ticket) {
  runChat(turns, continuation, {}, settings, ticket, Output::Text, ContextOverflow::DropOldestTurns);
}

void EngineWorker::generateChatTokens(const QList<ChatTurn>& turns, const QList<int>& forcedIds,
                                      const GenerationSettings& settings, quint64 ticket) {
  runChat(turns, {}, std::vector<int32_t>(forcedIds.begin(), forcedIds.end()), settings, ticket, Output::Tokens,
          ContextOverflow::Refuse);
}

void EngineWorker::runChat(const QList<ChatTurn>& turns, const QString& continuation,
                           const std::vector<int32_t>& forced, const GenerationSettings& settings, quint64 ticket,
                           Output output, ContextOverflow overflow) {
  std::vector<std::string> stops;
  if (m_model) stops = m_model->chat_template().stop_strings();
  run(
      [&] {
        std::vector<int32_t> ids = chatIds(turns, continuation);
        const int64_t context = m_info.contextLength;
        if (context <= 0) return ids;
        if (overflow == ContextOverflow::DropOldestTurns) {
          // Room for the reply: what it may take, but never more than a quarter of the context (a
          // budget as large as the context would leave no history at all). The reply still ends at
          // the context's end if it runs that far.
          const int64_t room = std::clamp<int64_t>(settings.max_tokens, 1, std::max<int64_t>(1, context / 4));
          QList<ChatTurn> kept = turns;
          const qsizetype first = !kept.isEmpty() && kept.first().role == QLatin1String("system") ? 1 : 0;
          int dropped = 0;
          // The oldest turns after the system prompt go first, the last turn never; a reply left at
          // the front without its question goes with it, as templates expect a user turn first.
          while (static_cast<int64_t>(ids.size()) + room > context && kept.size() - first > 1) {
            kept.removeAt(first);
            ++dropped;
            if (kept.size() - first > 1 && kept[first].role == QLatin1String("assistant")) {
              kept.removeAt(first);
              ++dropped;
            }
            ids = chatIds(kept, continuation);
          }
          if (dropped > 0) Q_EMIT chatTurnsLeftOut(dropped);
        }
        // What is left must fit: the last message (and system prompt) alone may not.
        if (static_cast<int64_t>(ids.size()) >= context)
          throw std::runtime_error(tr("This chat is %1 tokens, but the model reads at most %2. Delete or edit earlier "
                                      "messages, shorten the system prompt, or start a new chat.")
                                       .arg(ids.size())
                                       .arg(context)
                                       .toStdString());
        return ids;
      },
      forced, settings, ticket, output, stops);
}

void EngineWorker::tokenizeChat(const QList<ChatTurn>& turns, quint64 requestId) {
  QList<TokenRecord> pieces;
  const engine::Tokenizer* tokenizer = m_model ? m_model->tokenizer() : nullptr;
  if (tokenizer && !turns.isEmpty()) {
    try {
      for (int32_t id : chatIds(turns, {})) {
        TokenRecord r;
        r.id = id;
        const std::string bytes = tokenizer->token_bytes(id);
        r.text = displayBytes(bytes);
        // A special token is one its own text does not encode back to as plain text.
        r.special = tokenizer->encode(bytes, /*allow_special=*/false) != std::vector<int32_t>{id};
        pieces << r;
      }
    } catch (const std::exception&) {
      pieces.clear();
    }
  }
  Q_EMIT promptTokenized(requestId, pieces);
}

void EngineWorker::countChatTokens(const QList<ChatTurn>& turns, quint64 requestId) {
  int count = -1;
  if (m_model && m_model->tokenizer()) {
    try {
      count = static_cast<int>(std::min<size_t>(chatIds(turns, {}).size(), std::numeric_limits<int>::max()));
    } catch (const std::exception&) {
      count = -1;
    }
  }
  Q_EMIT chatTokensCounted(requestId, count);
}

void EngineWorker::tokenizePrompt(const QString& text, quint64 requestId) {
  QList<TokenRecord> pieces;
  const engine::Tokenizer* tokenizer = m_model ? m_model->tokenizer() : nullptr;
  if (tokenizer) {
    try {
      for (int32_t id : tokenizer->encode(text.toStdString())) {
        TokenRecord r;
        r.id = id;
        r.text = displayBytes(tokenizer->token_bytes(id));
        pieces << r;
      }
    } catch (const std::exception&) {
      pieces.clear();  // only an over-1-GiB text throws; the chips then stay empty
    }
  }
  Q_EMIT promptTokenized(requestId, pieces);
}

void EngineWorker::run(const std::function<std::vector<int32_t>()>& makeIds, const std::vector<int32_t>& forced,
                       const GenerationSettings& settings, quint64 ticket, Output output,
                       const std::vector<std::string>& extraStops) {
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
    std::vector<int32_t> ids = makeIds();
    if (ids.empty()) {
      Q_EMIT generationFailed(tr("Type a prompt first: this model has no start-of-text token to begin from."));
      return;
    }
    for (int32_t id : forced) {
      if (id < 0 || id >= tokenizer->vocab_size()) {
        Q_EMIT generationFailed(tr("Token id %1 is not in this model's vocabulary.").arg(id));
        return;
      }
    }
    const LogitBiasParse bias = parseLogitBias(fromStd(settings.logit_bias), *tokenizer);
    if (!bias.error.isEmpty()) {
      Q_EMIT generationFailed(bias.error);
      return;
    }
    const int promptCount = static_cast<int>(ids.size());
    ids.insert(ids.end(), forced.begin(), forced.end());
    if (!m_generator) m_generator = std::make_unique<engine::Generator>(*m_model, *m_backend);

    engine::GenerateParams params = engine::to_generate_params(settings, QRandomGenerator::global()->generate64());
    // maxTokens counts the forced ids too: they are part of the output the user sees.
    params.max_tokens = std::max(1, params.max_tokens - static_cast<int>(forced.size()));
    params.sampler.logit_bias = bias.entries;
    params.stop.insert(params.stop.end(), extraStops.begin(), extraStops.end());
    // Text alone shows no alternatives: do not have the engine rank them for every token.
    if (output == Output::Text) params.top_logprobs = 0;

    Q_EMIT generationStarted();

    // Whatever the caller shows is gathered for about one frame, so fast decoding sends one signal
    // per frame, not one per token.
    std::string pendingText;
    QList<TokenRecord> pendingRecords;
    std::string heldBytes;  // Tokens: the start of a multi-byte character cut by the last token
    bool emittedAny = false;
    QElapsedTimer sinceFlush;
    sinceFlush.start();
    const qint64 flushMs = m_flushMs.load();
    auto flush = [&] {
      if (pendingText.empty() && pendingRecords.isEmpty()) return;
      if (!pendingRecords.isEmpty()) Q_EMIT tokensGenerated(pendingRecords);
      if (!pendingText.empty()) Q_EMIT tokenGenerated(fromStd(pendingText));
      pendingText.clear();
      pendingRecords.clear();
      emittedAny = true;
      sinceFlush.restart();
    };
    auto record = [&](const engine::GeneratedToken& token) {
      TokenRecord r;
      r.id = token.id;
      // A token's own piece, cut at whole characters by the engine's rule (stream_safe_length with no
      // stop strings): the bytes of a character split across tokens go with the token that ends it.
      heldBytes += token.bytes;
      const size_t complete = engine::stream_safe_length(heldBytes, {});
      r.text = fromStd(heldBytes.substr(0, complete));
      heldBytes.erase(0, complete);
      r.logprob = token.logprob;
      r.alternatives.reserve(static_cast<qsizetype>(token.top.size()));
      for (const engine::TokenLogprob& t : token.top)
        r.alternatives << TokenAlternative{t.id, displayBytes(tokenizer->token_bytes(t.id)), t.logprob};
      return r;
    };
    const engine::GenerationResult result =
        m_generator->generate(ids, params, [&](const engine::GeneratedToken& token, const std::string& text) {
          // Text: the engine's stream (whole characters, never part of a stop string). Tokens: one
          // record per token; the flush event (id -1) carries no token.
          if (output == Output::Text) pendingText += text;
          else if (token.id >= 0) pendingRecords << record(token);
          // The first piece goes out at once: the time to first token is what people notice. A record
          // waiting for the rest of its character stays until that arrives (or generation ends).
          if (heldBytes.empty() && (!emittedAny || sinceFlush.elapsed() >= flushMs)) flush();
          return !m_generationGate.isCancelled(ticket);
        });
    // A character cut off by the end of generation: its bytes show on the last token (still pending,
    // see above) rather than being lost.
    if (!heldBytes.empty() && !pendingRecords.isEmpty()) pendingRecords.last().text += displayBytes(heldBytes);
    flush();

    GenerationStats stats;
    stats.promptTokens = promptCount;
    stats.generatedTokens = static_cast<int>(forced.size()) + result.stats.generated_tokens;  // the whole output
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
