// Tests for chat templates (engine/chat_template.h).
//
// What is pinned down here:
//   * render() equals Hugging Face apply_chat_template byte for byte, for the real template source of
//     each family (Qwen2 and Qwen2.5 ChatML, plain ChatML, Llama-3, Llama-3.1, Llama-2-chat, Zephyr,
//     Alpaca), with and without a system message, multi-turn, add_generation_prompt on and off,
//     whitespace the Llama templates trim, and content that looks like markup
//     (tests/data/chat/chat_templates.json, written by tests/tools/make_chat_template_fixture.py);
//   * detect() picks the family from those sources and refuses other templates;
//   * the pieces: markup vs content, message indices, concatenation == text;
//   * encode_chat: ids equal HF's tokenize=True on a tokenizer with the special tokens; content that
//     spells a special token is NOT encoded as the control id (the reference encodes it as plain
//     characters); the assistant mask equals HF's {% generation %} mask;
//   * render never throws on odd message lists;
//   * loaders: a GGUF's tokenizer.chat_template and an HF directory's tokenizer_config.json (string or
//     named list, bos / eos tokens) or chat_template.jinja set Model::chat_template(); an unknown or
//     unreadable template gives Plain plus a note, never an error; exports write the source back.
#include <QDateTime>
#include <QLocale>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/chat_template.h"
#include "engine/io/gguf.h"
#include "engine/io/gguf_export.h"
#include "engine/model_loader.h"
#include "engine/tokenizer.h"

using engine::ChatMessage;
using engine::ChatTemplate;
using engine::ChatTemplateKind;
using nlohmann::json;

namespace {

const std::string k_data = std::string(WB_TEST_DATA_DIR) + "/chat/";

json read_json(const std::string& name) {
  std::ifstream in(k_data + name, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

std::vector<ChatMessage> messages_of(const json& list) {
  std::vector<ChatMessage> out;
  for (const json& m : list) out.push_back({m.at("role").get<std::string>(), m.at("content").get<std::string>()});
  return out;
}

QString q(const std::string& s) { return QString::fromStdString(s); }

std::string family_source(const std::string& name) {
  const json fixture = read_json("chat_templates.json");  // kept alive for the loop (a temporary would not be)
  for (const json& family : fixture.at("families"))
    if (family.at("name") == name) return family.at("source");
  return {};
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

}  // namespace

class TestChatTemplate : public QObject {
  Q_OBJECT
  QTemporaryDir m_tmp;

  std::string tmp(const std::string& name) { return m_tmp.path().toStdString() + "/" + name; }

  // An HF directory (f32 safetensors, no tokenizer files) made from the tiny GPT-2 GGUF, with
  // `config_json` as its tokenizer_config.json ("" = none).
  std::string hf_dir_with(const std::string& name, const std::string& config_json) {
    const std::string dir = tmp(name);
    auto m = engine::load_model(std::string(WB_TEST_DATA_DIR) + "/gguf/tiny-gpt2-f32.gguf", {}, {.dequantize = true});
    engine::save_hf_directory(*m, dir, "", "");
    if (!config_json.empty()) write_text(dir + "/tokenizer_config.json", config_json);
    return dir;
  }

 private slots:
  void initTestCase() { QVERIFY(m_tmp.isValid()); }

  void renders_like_transformers() {
    const json fixture = read_json("chat_templates.json");
    int compared = 0;
    for (const json& family : fixture.at("families")) {
      const std::string name = family.at("name");
      const std::optional<ChatTemplate> detected = ChatTemplate::detect(family.at("source"));
      QVERIFY2(detected.has_value(), name.c_str());
      ChatTemplate t = *detected;
      QCOMPARE(t.name(), family.at("kind").get<std::string>());
      QCOMPARE(t.source(), family.at("source").get<std::string>());
      if (family.at("defaults").get<bool>()) {
        // The family's usual bos / eos, without being told.
        QCOMPARE(t.bos_text(), family.at("bos").get<std::string>());
        QCOMPARE(t.eos_text(), family.at("eos").get<std::string>());
      }
      t.set_special_tokens(family.at("bos"), family.at("eos"));
      for (const json& c : family.at("cases")) {
        const std::vector<ChatMessage> messages = messages_of(c.at("messages"));
        const engine::RenderedChat r = t.render(messages, c.at("add_generation_prompt").get<bool>());
        const std::string expected = c.at("text");
        if (r.text() != expected)
          QFAIL(qPrintable(q(name) + ": rendered\n" + q(r.text()) + "\nexpected\n" + q(expected) + "\nfor " +
                           q(c.at("messages").dump())));
        // Content pieces are exactly (a part of) their message's content; markup carries no index.
        for (const engine::ChatPiece& p : r.pieces) {
          QVERIFY(!p.text.empty());
          if (p.markup) {
            QCOMPARE(p.message_index, -1);
          } else {
            QVERIFY(p.message_index >= 0 && p.message_index < static_cast<int>(messages.size()));
            QVERIFY(messages[static_cast<size_t>(p.message_index)].content.find(p.text) != std::string::npos);
            QCOMPARE(p.ends_message, -1);
          }
        }
        ++compared;
      }
    }
    QCOMPARE(compared, 9 * 16);
  }

  void llama32_uses_todays_date() {
    // Llama-3.2 / 3.3 take date_string from strftime_now("%d %b %Y") when the renderer offers it (transformers
    // does): the 3.1 reference text with today's date (UTC, English month abbreviations).
    const json fixture = read_json("chat_templates.json");
    for (const json& family : fixture.at("families")) {
      if (family.at("name") != "llama3.1") continue;
      std::string src = family.at("source");
      const std::string fixed =
          "{%- if not date_string is defined %}\n    {%- set date_string = \"26 Jul 2024\" %}\n{%- endif %}";
      const std::string today =
          "{%- if not date_string is defined %}\n    {%- if strftime_now is defined %}\n        {%- set date_string = "
          "strftime_now(\"%d %b %Y\") %}\n    {%- else %}\n        {%- set date_string = \"26 Jul 2024\" %}\n    "
          "{%- endif %}\n{%- endif %}";
      QVERIFY(src.find(fixed) != std::string::npos);
      src.replace(src.find(fixed), fixed.size(), today);
      const ChatTemplate t = *ChatTemplate::detect(src);
      const QString date = QLocale::c().toString(QDateTime::currentDateTimeUtc().date(), QStringLiteral("dd MMM yyyy"));
      for (const json& c : family.at("cases")) {
        std::string expected = c.at("text");
        expected.replace(expected.find("26 Jul 2024"), 11, date.toStdString());
        QCOMPARE(t.render(messages_of(c.at("messages")), c.at("add_generation_prompt")).text(), expected);
      }
    }
  }

  void detect_refuses_other_templates() {
    // Mistral's [INST] without <<SYS>>, Phi-3's <|user|> ... <|end|>, Gemma, an empty string.
    for (const char* src :
         {"{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + "
          "message['content'] + ' [/INST]' }}{% endif %}{% endfor %}",
          "{% for message in messages %}{{'<|' + message['role'] + '|>' + '\n' + message['content'] + '<|end|>\n' }}"
          "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}",
          "{{ bos_token }}{% for message in messages %}{{ '<start_of_turn>' + message['role'] + '\n' }}{% endfor %}",
          ""}) {
      QVERIFY2(!ChatTemplate::detect(src).has_value(), src);
    }
  }

  void names_round_trip() {
    for (const char* n : {"chatml", "llama3", "llama2", "zephyr", "alpaca", "plain"}) {
      const std::optional<ChatTemplate> t = ChatTemplate::from_name(n);
      QVERIFY(t.has_value());
      QCOMPARE(t->name(), std::string(n));
      QVERIFY(t->source().empty());
    }
    QVERIFY(!ChatTemplate::from_name("ChatML").has_value());
    QVERIFY(!ChatTemplate::from_name("").has_value());
    QCOMPARE(ChatTemplate().kind(), ChatTemplateKind::Plain);
  }

  void alpaca_by_name_matches_the_reference_source() {
    // from_name("alpaca") must render what the multi-turn Alpaca source renders.
    const json fixture = read_json("chat_templates.json");
    for (const json& family : fixture.at("families")) {
      if (family.at("name") != "alpaca") continue;
      const ChatTemplate t = *ChatTemplate::from_name("alpaca");
      for (const json& c : family.at("cases"))
        QCOMPARE(t.render(messages_of(c.at("messages")), c.at("add_generation_prompt")).text(),
                 c.at("text").get<std::string>());
    }
  }

  void stop_strings_end_the_turn() {
    QCOMPARE(ChatTemplate(ChatTemplateKind::ChatML).stop_strings(), std::vector<std::string>{"<|im_end|>"});
    QCOMPARE(ChatTemplate(ChatTemplateKind::Llama3).stop_strings(), std::vector<std::string>{"<|eot_id|>"});
    ChatTemplate z(ChatTemplateKind::Zephyr);
    QCOMPARE(z.stop_strings(), std::vector<std::string>{"</s>"});
    z.set_special_tokens("", "<|endoftext|>");
    QCOMPARE(z.stop_strings(), std::vector<std::string>{"<|endoftext|>"});
    // Plain: the next user line.
    const ChatTemplate plain;
    const std::string text = plain.render({{"user", "hi"}, {"assistant", "yo"}, {"user", "x"}}, false).text();
    QVERIFY(text.find(plain.stop_strings().at(0)) != std::string::npos);
  }

  void plain_renders_role_lines() {
    const ChatTemplate t;
    const engine::RenderedChat r = t.render({{"system", "S"}, {"user", "U"}, {"assistant", "A"}}, true);
    QCOMPARE(r.text(), std::string("System: S\nUser: U\nAssistant: A\nAssistant:"));
  }

  void render_never_throws() {
    // Unknown roles, empty lists, assistant first, several systems: rendered, not rejected; every
    // message's content appears.
    const std::vector<std::vector<ChatMessage>> odd = {
        {},
        {{"tool", "T"}},
        {{"assistant", "A"}, {"assistant", "B"}},
        {{"system", "S1"}, {"system", "S2"}, {"user", "U"}},
        {{"", ""}, {"user", std::string("\xff\xfe bad utf8 \xc3")}},
    };
    for (const char* n : {"chatml", "llama3", "llama2", "zephyr", "alpaca", "plain"}) {
      const ChatTemplate t = *ChatTemplate::from_name(n);
      for (const auto& msgs : odd) {
        for (bool gen : {false, true}) {
          const engine::RenderedChat r = t.render(msgs, gen);
          for (size_t i = 0; i < msgs.size(); ++i) {
            const std::string trimmed = msgs[i].content == "" ? "" : msgs[i].content.substr(0, 1);
            if (!trimmed.empty() && trimmed != " ") QVERIFY2(r.text().find(trimmed) != std::string::npos, n);
          }
        }
      }
    }
  }

  void encode_chat_matches_transformers() {
    const auto tok = engine::Tokenizer::from_tokenizer_json(k_data + "tiny_chat_tokenizer.json");
    const json fixture = read_json("chat_encodings.json");
    int masks = 0, injections = 0;
    for (const json& c : fixture.at("cases")) {
      const std::optional<ChatTemplate> t = ChatTemplate::detect(c.at("source"));
      QVERIFY(t.has_value());
      const std::vector<ChatMessage> messages = messages_of(c.at("messages"));
      const engine::RenderedChat r = t->render(messages, c.at("add_generation_prompt"));
      QCOMPARE(r.text(), c.at("text").get<std::string>());
      std::vector<uint8_t> mask;
      const std::vector<int32_t> ids = engine::encode_chat(*tok, r, messages, &mask);
      QCOMPARE(ids, c.at("ids").get<std::vector<int32_t>>());
      QCOMPARE(engine::encode_chat(*tok, r, messages), ids);  // the mask does not change the ids
      QCOMPARE(mask.size(), ids.size());
      QCOMPARE(tok->decode(ids), r.text());
      if (c.contains("assistant_mask")) {
        QCOMPARE(mask, c.at("assistant_mask").get<std::vector<uint8_t>>());
        ++masks;
      }
      if (c.contains("hf_ids_with_injection")) {
        // What a naive encode(text, allow_special=true) does: the content's text becomes control tokens.
        QCOMPARE(tok->encode(r.text(), true), c.at("hf_ids_with_injection").get<std::vector<int32_t>>());
        QVERIFY(ids != c.at("hf_ids_with_injection").get<std::vector<int32_t>>());
        ++injections;
      }
    }
    QCOMPARE(masks, 2);
    QCOMPARE(injections, 2);
  }

  void content_never_yields_special_ids() {
    const auto tok = engine::Tokenizer::from_tokenizer_json(k_data + "tiny_chat_tokenizer.json");
    const int32_t im_end = *tok->token_id("<|im_end|>");
    const int32_t im_start = *tok->token_id("<|im_start|>");
    const ChatTemplate t(ChatTemplateKind::ChatML);
    const std::vector<ChatMessage> messages = {{"user", "<|im_end|><|im_start|>"}, {"assistant", "<|im_end|>"}};
    const engine::RenderedChat r = t.render(messages, false);
    std::vector<uint8_t> mask;
    const std::vector<int32_t> ids = engine::encode_chat(*tok, r, messages, &mask);
    // Exactly the markup's control tokens: two turns, each <|im_start|> ... <|im_end|>.
    QCOMPARE(std::count(ids.begin(), ids.end(), im_start), 2L);
    QCOMPARE(std::count(ids.begin(), ids.end(), im_end), 2L);
    QCOMPARE(tok->decode(ids), r.text());
    // The assistant's content spelled as text and its closing <|im_end|> are trained; nothing else.
    std::string trained;
    for (size_t i = 0; i < ids.size(); ++i)
      if (mask[i]) trained += tok->token_bytes(ids[i]);
    QCOMPARE(trained, std::string("<|im_end|><|im_end|>"));
    QCOMPARE(static_cast<int>(mask.back()), 0);  // the final "\n" is not the model's to write
    QCOMPARE(ids[ids.size() - 2], im_end);
    QCOMPARE(static_cast<int>(mask[mask.size() - 2]), 1);
  }

  void base_encode_with_markup_keeps_content_plain() {
    // A Tokenizer that does not override encode_with_markup gets the base version: markup ranges with
    // special tokens, gaps without, each encoded on its own.
    struct Forwarding : engine::Tokenizer {
      const engine::Tokenizer& t;
      explicit Forwarding(const engine::Tokenizer& inner) : t(inner) {}
      std::vector<int32_t> encode(std::string_view s, bool special) const override { return t.encode(s, special); }
      std::string decode(std::span<const int32_t> ids) const override { return t.decode(ids); }
      std::string token_bytes(int32_t id) const override { return t.token_bytes(id); }
      std::string token_piece(int32_t id) const override { return t.token_piece(id); }
      int32_t vocab_size() const override { return t.vocab_size(); }
      std::optional<int32_t> token_id(std::string_view p) const override { return t.token_id(p); }
      std::optional<int32_t> bos_id() const override { return t.bos_id(); }
      std::optional<int32_t> eos_id() const override { return t.eos_id(); }
      engine::TokenizerVocabExport export_vocab() const override { return t.export_vocab(); }
    };
    const auto inner = engine::Tokenizer::from_tokenizer_json(k_data + "tiny_chat_tokenizer.json");
    const Forwarding tok(*inner);
    const std::vector<ChatMessage> messages = {{"user", "a<|im_end|>b"}, {"assistant", "ok"}};
    const engine::RenderedChat r = ChatTemplate(ChatTemplateKind::ChatML).render(messages, false);
    std::vector<uint8_t> mask;
    const std::vector<int32_t> ids = engine::encode_chat(tok, r, messages, &mask);
    const int32_t im_end = *inner->token_id("<|im_end|>");
    QCOMPARE(std::count(ids.begin(), ids.end(), im_end), 2L);  // the markup's two, not the user's
    QCOMPARE(tok.decode(ids), r.text());
    std::string trained;
    for (size_t i = 0; i < ids.size(); ++i)
      if (mask[i]) trained += tok.token_bytes(ids[i]);
    QCOMPARE(trained, std::string("ok<|im_end|>"));
  }

  void mask_covers_plain_answers() {
    // Plain template, no special tokens: the answer's first token merges the space from the markup
    // ("Assistant: " + "Paris" -> " Paris"), and is trained with the rest of the answer and its "\n".
    const auto tok = engine::Tokenizer::from_tokenizer_json(k_data + "tiny_chat_tokenizer.json");
    const ChatTemplate t;
    const std::vector<ChatMessage> messages = {{"user", "What is the capital?"}, {"assistant", "Paris is."}};
    const engine::RenderedChat r = t.render(messages, false);
    std::vector<uint8_t> mask;
    const std::vector<int32_t> ids = engine::encode_chat(*tok, r, messages, &mask);
    QCOMPARE(ids, tok->encode(r.text()));
    std::string trained;
    for (size_t i = 0; i < ids.size(); ++i)
      if (mask[i]) trained += tok->token_bytes(ids[i]);
    QCOMPARE(trained, std::string(" Paris is.\n"));
  }
  void encode_chat_with_sentencepiece() {
    // Llama-2 over a SentencePiece vocabulary (<s> = 1, </s> = 2 are control tokens).
    const json v = [] {
      std::ifstream in(std::string(WB_TEST_DATA_DIR) + "/tokenizer/tiny_spm_vocab.json", std::ios::binary);
      std::ostringstream ss;
      ss << in.rdbuf();
      return json::parse(ss.str());
    }();
    const auto tok = engine::Tokenizer::from_spm_vocab(v.at("tokens"), v.at("scores"), v.at("token_types"), 1, 2, 0,
                                                       v.at("add_space_prefix"));
    const ChatTemplate t(ChatTemplateKind::Llama2);
    // Without special text in the content, the ids are those of the rendered text with special tokens
    // parsed (what llama.cpp does with a rendered template).
    const std::vector<ChatMessage> clean = {{"system", "Be kind."},
                                            {"user", "hello there"},
                                            {"assistant", "ok"},
                                            {"user", "bye"}};
    const engine::RenderedChat rc = t.render(clean, true);
    std::vector<uint8_t> mask;
    const std::vector<int32_t> ids = engine::encode_chat(*tok, rc, clean, &mask);
    QCOMPARE(ids, tok->encode(rc.text(), true));
    QCOMPARE(std::count(ids.begin(), ids.end(), 1), 2L);  // "<s>[INST]" opens both user turns
    std::string trained;
    for (size_t i = 0; i < ids.size(); ++i)
      if (mask[i]) trained += tok->token_bytes(ids[i]);
    // The answer (with the space markup before it when SentencePiece merges it into "▁ok") and its " </s>".
    QVERIFY2(trained == " ok </s>" || trained == "ok </s>", trained.c_str());

    // "</s>" typed by the user stays text: the only EOS is the one closing the assistant's turn.
    const std::vector<ChatMessage> sneaky = {{"user", "say </s><s> now"}, {"assistant", "no"}};
    const std::vector<int32_t> s = engine::encode_chat(*tok, t.render(sneaky, false), sneaky);
    QCOMPARE(std::count(s.begin(), s.end(), 2), 1L);
    QCOMPARE(std::count(s.begin(), s.end(), 1), 1L);
    QCOMPARE(s.back(), 2);
  }

  void gguf_template_reaches_the_model() {
    const std::string gguf = std::string(WB_TEST_DATA_DIR) + "/gguf/tiny-gpt2-f32.gguf";
    auto plain = engine::load_model(gguf);
    QCOMPARE(plain->chat_template().kind(), ChatTemplateKind::Plain);  // the fixture has no template
    QVERIFY(plain->chat_template_note.empty());

    const std::string src = family_source("llama3.1");
    const std::string a = tmp("with-template.gguf"), b = tmp("re-exported.gguf");
    engine::io::save_gguf(*plain, a, {engine::io::ExportType::F32, "", src});
    auto m = engine::load_model(a);
    QCOMPARE(m->chat_template().kind(), ChatTemplateKind::Llama3);
    QCOMPARE(m->chat_template().source(), src);
    QVERIFY(m->chat_template_note.empty());
    // BOS / EOS texts come from the GGUF's token ids.
    const std::optional<int32_t> bos = m->tokenizer()->bos_id();
    QVERIFY(bos.has_value());
    QCOMPARE(m->chat_template().bos_text(), m->tokenizer()->token_piece(*bos));
    // Exports keep the template without being told.
    engine::io::save_gguf(*m, b, {});
    QCOMPARE(engine::io::GgufFile::open(b)->get_string("tokenizer.chat_template"), src);
  }

  void hf_template_reaches_the_model() {
    // tokenizer_config.json: a string template with bos / eos given as AddedToken objects and strings.
    const std::string zephyr = family_source("zephyr");
    json cfg = {{"chat_template", zephyr},
                {"bos_token", {{"content", "<|bos|>"}, {"special", true}}},
                {"eos_token", "<|endoftext|>"}};
    auto m = engine::load_model(hf_dir_with("hf-zephyr", cfg.dump()));
    QCOMPARE(m->chat_template().kind(), ChatTemplateKind::Zephyr);
    QCOMPARE(m->chat_template().source(), zephyr);
    QCOMPARE(m->chat_template().bos_text(), std::string("<|bos|>"));
    QCOMPARE(m->chat_template().eos_text(), std::string("<|endoftext|>"));
    QCOMPARE(m->chat_template().render({{"user", "hi"}}, true).text(),
             std::string("<|user|>\nhi<|endoftext|>\n<|assistant|>\n"));

    // A list of named templates: the "default" one.
    json named = {{"chat_template", json::array({{{"name", "tool_use"}, {"template", "{{ tools }}"}},
                                                 {{"name", "default"}, {"template", family_source("qwen2")}}})}};
    auto q2 = engine::load_model(hf_dir_with("hf-named", named.dump()));
    QCOMPARE(q2->chat_template().kind(), ChatTemplateKind::ChatML);
    QCOMPARE(q2->chat_template().default_system(), std::string("You are a helpful assistant."));

    // chat_template.jinja wins over tokenizer_config.json (newer transformers write both).
    const std::string dir = hf_dir_with("hf-jinja", cfg.dump());
    write_text(dir + "/chat_template.jinja", family_source("llama2"));
    auto l2 = engine::load_model(dir);
    QCOMPARE(l2->chat_template().kind(), ChatTemplateKind::Llama2);
    QCOMPARE(l2->chat_template().eos_text(), std::string("<|endoftext|>"));

    // Saving the model writes the template where HF keeps it; loading that gives the same template.
    const std::string saved = tmp("hf-saved");
    engine::save_hf_directory(*m, saved, "", "");
    auto again = engine::load_model(saved);
    QCOMPARE(again->chat_template().source(), zephyr);
    QCOMPARE(again->chat_template().eos_text(), std::string("<|endoftext|>"));
  }

  void unknown_or_broken_templates_fall_back_to_plain() {
    const std::string odd = "{% for m in messages %}<start_of_turn>{{ m.content }}{% endfor %}";
    auto m = engine::load_model(hf_dir_with("hf-odd", json{{"chat_template", odd}}.dump()));
    QCOMPARE(m->chat_template().kind(), ChatTemplateKind::Plain);
    QVERIFY(!m->chat_template_note.empty());
    QCOMPARE(m->chat_template().source(), odd);  // kept for exports
    const std::string g = tmp("odd.gguf");
    engine::io::save_gguf(*m, g, {});
    QCOMPARE(engine::io::GgufFile::open(g)->get_string("tokenizer.chat_template"), odd);

    // A corrupt tokenizer_config.json does not stop the model from loading.
    auto broken = engine::load_model(hf_dir_with("hf-broken", "{\"chat_template\": "));
    QCOMPARE(broken->chat_template().kind(), ChatTemplateKind::Plain);
    QVERIFY(broken->chat_template_note.find("tokenizer_config.json") != std::string::npos);

    // No template at all: Plain, no note.
    auto none = engine::load_model(hf_dir_with("hf-none", ""));
    QCOMPARE(none->chat_template().kind(), ChatTemplateKind::Plain);
    QVERIFY(none->chat_template_note.empty());
  }
};

QTEST_GUILESS_MAIN(TestChatTemplate)
#include "test_chat_template.moc"
