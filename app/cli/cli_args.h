// A strict flag parser for llm-workbench-cli: every flag must be known to the command, values are
// type-checked, and anything wrong is a UsageError with one clear sentence.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace wb::cli {

class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& m) : std::runtime_error(m) {}
};

// Thrown when the user asked for a command's --help; carries the text to print.
class HelpRequested : public std::runtime_error {
 public:
  explicit HelpRequested(const std::string& text) : std::runtime_error(text) {}
};

struct FlagSpec {
  std::string name;  // without "--"
  bool takes_value;  // false: a switch like --json
  bool repeatable = false;
  std::string help;
};

class Args {
 public:
  // Parses argv[first..argc) against `specs`. Throws UsageError, or HelpRequested for --help / -h.
  Args(const std::vector<FlagSpec>& specs, int argc, char** argv, int first);

  bool has(const std::string& name) const { return m_values.count(name) > 0; }
  std::string str(const std::string& name, const std::string& fallback = "") const;
  std::string required(const std::string& name) const;
  std::vector<std::string> all(const std::string& name) const;
  long long integer(const std::string& name, long long fallback, long long min, long long max) const;
  double number(const std::string& name, double fallback, double min, double max) const;

 private:
  std::map<std::string, std::vector<std::string>> m_values;
};

std::string usage_text(const std::string& command, const std::vector<FlagSpec>& specs);

}  // namespace wb::cli
