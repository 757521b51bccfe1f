// EngineWorker: the only object that touches the engine. It lives on its own QThread and owns the
// backend, the model and the generator, so they are created, used and destroyed on that thread.
//
// Commands arrive as queued slot calls (the controller's xxxRequested signals); results leave as
// signals. Cancel and stop are NOT queued slots: while a load or a generation runs, this thread's
// event loop is busy, so a queued call would only arrive afterwards. They go through RequestGates
// that the engine's progress/token callbacks poll, and are the only members safe to call from any
// thread.
#pragma once

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "chattypes.h"
#include "generationtypes.h"
#include "inspectiontypes.h"
#include "modelinfo.h"
#include "requestgate.h"

namespace engine {
class Backend;
class Model;
class Generator;
}  // namespace engine

class EngineWorker : public QObject {
  Q_OBJECT

 public:
  explicit EngineWorker(QObject* parent = nullptr);
  ~EngineWorker() override;

  // Thread-safe: take a ticket before queuing a request; cancel every request issued so far.
  quint64 issueLoadTicket() { return m_loadGate.issue(); }
  void requestCancelLoad() { m_loadGate.cancelIssued(); }
  quint64 issueGenerationTicket() { return m_generationGate.issue(); }
  void requestStopGeneration() { m_generationGate.cancelIssued(); }
  // Thread-safe: a request id for inspect(); cancel every inspection issued so far.
  quint64 issueInspectTicket() { return m_inspectGate.issue(); }
  void requestCancelInspect() { m_inspectGate.cancelIssued(); }
  // Thread-safe: how long text and token records are gathered before one signal carries them.
  void setTokenFlushInterval(int ms) { m_flushMs.store(ms); }

 public Q_SLOTS:
  // Creates the backend for `threads` (0 = all cores) if it does not exist with that count yet.
  void prepareBackend(int threads);
  // Loads `path`; the current model stays in place until the new one has loaded completely, so a
  // failed or cancelled load leaves the app as it was. ticket 0: issue one now.
  void loadModel(const QString& path, int threads, quint64 ticket = 0);
  // Raw completion of `prompt` with the loaded model, as token records. ticket 0: issue one now.
  void generate(const QString& prompt, const GenerationSettings& settings, quint64 ticket = 0);
  // Continues `prompt` after `forcedIds`: the tokens shown so far with one of them replaced by an
  // alternative the user chose. The prompt's cached keys/values are reused; generation goes on from
  // after the last forced id, and maxTokens counts the forced ids too. Emits records for the new
  // tokens only (the view already holds the forced ones).
  void continueGeneration(const QString& prompt, const QList<int>& forcedIds, const GenerationSettings& settings,
                          quint64 ticket = 0);
  // Splits `text` into the model's tokens, as generate() would. Answers with promptTokenized.
  void tokenizePrompt(const QString& text, quint64 requestId);
  // A chat reply, as text: `turns` rendered with the model's chat template (special tokens only from
  // its markup), generation stopping at the template's end-of-turn strings. No alternatives are
  // computed, whatever the settings' top_logprobs says. `continuation`: the reply so
  // far, to be continued (its text is not emitted again). A chat that leaves less room than the reply
  // may take (at most a quarter of the context) is read without its oldest turns (never the system
  // prompt or the last turn), and chatTurnsLeftOut says how many; when even that does not fit, it
  // fails with a message saying so.
  void generateChat(const QList<ChatTurn>& turns, const QString& continuation, const GenerationSettings& settings,
                    quint64 ticket = 0);
  // The Playground's chat mode: `turns` rendered as by generateChat (refused, never shortened, when
  // longer than the context: the Playground shows the prompt exactly), then `forcedIds` (the
  // reply so far with one token swapped for an alternative; empty for a new reply) as by
  // continueGeneration. Emits per-token records like generate().
  void generateChatTokens(const QList<ChatTurn>& turns, const QList<int>& forcedIds, const GenerationSettings& settings,
                          quint64 ticket = 0);
  // The ids generateChat would feed for `turns` as pieces, special tokens (only ever from the
  // template's markup) flagged: the Playground's prompt chips in chat mode. Answers with
  // promptTokenized.
  void tokenizeChat(const QList<ChatTurn>& turns, quint64 requestId);
  // Tokens of `turns` as generateChat would feed them (for the context meter). Answers with
  // chatTokensCounted; -1 when there is no model or tokenizer.
  void countChatTokens(const QList<ChatTurn>& turns, quint64 requestId);
  // Attention, logit lens and next-token top-k over `ids` (or, when empty, `text` tokenized as the
  // model reads it). Ends in exactly one of inspectionReady or inspectionFailed (engineworker_inspect.cpp).
  void inspect(const QString& text, const QList<int>& ids, quint64 requestId);
  // A chat inspected exactly as the model reads it: the ids generateChat would feed for `turns` and
  // `continuation` (chatIds). For a reply, turns end before it and continuation is its text.
  void inspectChat(const QList<ChatTurn>& turns, const QString& continuation, quint64 requestId);

 Q_SIGNALS:
  void backendChanged(const QString& name, const QString& reason, const QString& description);
  void backendFailed(const QString& message);
  // Every loadModel() call ends in exactly one of modelLoaded, loadFailed or loadCancelled.
  void loadStarted(const QString& path);
  void loadProgress(double fraction, const QString& stage);
  void modelLoaded(const ModelInfo& info);
  void loadFailed(const QString& message);
  void loadCancelled(const QString& path);

  void generationStarted();
  // A generation emits one of two streams, batched to about one signal per frame so fast decoding
  // does not flood the GUI's event loop: generateChat, whose caller shows text, emits text that
  // became final (the engine's stream: whole characters, never part of a stop string); the others,
  // whose caller shows tokens, emit records with ids, text pieces, logprobs and the alternatives.
  void tokenGenerated(const QString& text);
  void tokensGenerated(const QList<TokenRecord>& tokens);
  void promptTokenized(quint64 requestId, const QList<TokenRecord>& pieces);
  void chatTokensCounted(quint64 requestId, int tokens);
  // generateChat left this many of the oldest turns out of the prompt to fit the context (before
  // generationStarted).
  void chatTurnsLeftOut(int turns);
  void generationFinished(const GenerationStats& stats);
  void generationFailed(const QString& message);
  void inspectionProgress(quint64 requestId, double fraction);
  void inspectionReady(quint64 requestId, const InspectionPtr& inspection);
  void inspectionFailed(quint64 requestId, const QString& message);

 private:
  void ensureBackend(int threads);
  // What a request's caller shows: the text stream (tokenGenerated) or token records (tokensGenerated).
  enum class Output { Text, Tokens };
  // Shared by every generation: `makeIds` gives the prompt's ids (it may throw; the message is
  // reported), `forced` is appended to them, `extraStops` join the settings' stop strings.
  void run(const std::function<std::vector<int32_t>()>& makeIds, const std::vector<int32_t>& forced,
           const GenerationSettings& settings, quint64 ticket, Output output,
           const std::vector<std::string>& extraStops = {});
  // What a chat longer than the context gets: its oldest turns left out, or a refusal.
  enum class ContextOverflow { DropOldestTurns, Refuse };
  // generateChat and generateChatTokens: the chat's ids (see ContextOverflow; refused when what is
  // left still fills the context), then `forced`, stopping at the template's end-of-turn strings.
  void runChat(const QList<ChatTurn>& turns, const QString& continuation, const std::vector<int32_t>& forced,
               const GenerationSettings& settings, quint64 ticket, Output output, ContextOverflow overflow);
  // The chat's ids as the model's template renders them, with the generation prompt.
  std::vector<int32_t> chatIds(const QList<ChatTurn>& turns, const QString& continuation) const;
  // Prompt ids as generate() feeds them (an empty prompt starts from the boundary token).
  std::vector<int32_t> promptIds(const QString& prompt) const;

  // Declaration order is destruction order in reverse: the generator references the model and the
  // backend, so it must go first.
  std::unique_ptr<engine::Backend> m_backend;
  int m_backendThreads = -1;
  std::unique_ptr<engine::Model> m_model;
  std::unique_ptr<engine::Generator> m_generator;
  ModelInfo m_info;

  RequestGate m_loadGate;
  RequestGate m_generationGate;
  RequestGate m_inspectGate;
  std::atomic<int> m_flushMs{16};  // about one screen refresh
};
