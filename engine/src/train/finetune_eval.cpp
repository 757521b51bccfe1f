// validation_loss_of / greedy_answers: see engine/train/finetune_eval.h.
#include "engine/train/finetune_eval.h"

#include <algorithm>
#include <cmath>

#include "engine/error.h"
#include "engine/generator.h"
#include "engine/tokenizer.h"

namespace engine {

ValidationLoss validation_loss_of(Model& model, Backend& backend, const TrainingRunSpec& spec,
                                  const ChatTemplate& chat_template, const std::function<bool(int, int)>& progress) {
  const Tokenizer* tok = model.tokenizer();
  if (!tok) throw Error("the model has no tokenizer, so the validation text cannot be encoded");
  TrainingDataOptions d;
  d.recipe = spec.recipe;
  d.path = spec.data_path;
  d.B = spec.batch;
  d.T = spec.seq > 0 ? spec.seq : std::min(128, model.config().max_seq_len);
  d.shuffle = spec.shuffle;
  d.seed = spec.seed;
  d.val_fraction = spec.val_fraction;
  d.validation = true;
  d.chat_template = chat_template;
  TrainingData data = prepare_training_data(d, *tok);
  if (!data.val) throw Error(spec.data_path + ": the run has no validation split (its validation fraction is 0)");
  TrainModel tm(model, backend);  // forward only: no LoRA needed, the weights are what they are
  Batch batch;
  double sum = 0, weight = 0;
  for (int i = 0; i < spec.val_batches; ++i) {
    data.val->next(batch);
    const double n = double(batch.counted_positions());
    if (n > 0) {
      sum += double(tm.loss(batch.view(), spec.label_smoothing)) * n;
      weight += n;
    }
    if (progress && !progress(i + 1, spec.val_batches)) throw Error("stopped");
  }
  ValidationLoss r;
  r.positions = static_cast<uint64_t>(weight);
  r.loss = weight > 0 ? sum / weight : 0.0;
  r.perplexity = std::exp(r.loss);
  return r;
}

std::vector<std::string> greedy_answers(const Model& model, Backend& backend, const std::vector<std::string>& prompts,
                                        Recipe recipe, const ChatTemplate& chat_template, int max_tokens,
                                        const std::function<bool()>& keep_going) {
  const Tokenizer* tok = model.tokenizer();
  if (!tok) throw Error("the model has no tokenizer, so it cannot read the prompts");
  std::vector<std::string> answers;
  for (const std::string& prompt : prompts) {
    if (keep_going && !keep_going()) break;
    std::vector<int32_t> ids;
    if (recipe_uses_chat_template(recipe)) {
      const std::vector<ChatMessage> msgs = {{"user", prompt}};
      ids = encode_chat(*tok, chat_template.render(msgs, /*add_generation_prompt=*/true), msgs);
    } else {
      ids = tok->encode(prompt);
    }
    if (ids.empty()) {
      answers.emplace_back();
      continue;
    }
    Generator gen(model, backend);
    GenerateParams p;
    p.max_tokens = max_tokens;
    p.sampler.temperature = 0.0f;  // greedy
    p.sampler.seed = 1;            // fixed, so nothing left to chance even if a stage draws
    answers.push_back(gen.generate(ids, p).text);
  }
  return answers;
}

}  // namespace engine
