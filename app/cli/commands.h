// The CLI's commands; each returns the process exit code and throws UsageError / engine::Error.
#pragma once

namespace wb::cli {

int cmd_generate(int argc, char** argv);
int cmd_tokenize(int argc, char** argv);
int cmd_tokenizer(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_init(int argc, char** argv);
int cmd_convert(int argc, char** argv);
int cmd_quantize(int argc, char** argv);
int cmd_eval(int argc, char** argv);
int cmd_train(int argc, char** argv);
int cmd_data(int argc, char** argv);
int cmd_attention(int argc, char** argv);
int cmd_lens(int argc, char** argv);
int cmd_serve(int argc, char** argv);

}  // namespace wb::cli
