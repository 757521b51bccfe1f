// Args: see cli_args.h.
#include "cli_args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace wb::cli {

Args::Args(const std::vector<FlagSpec>& specs, int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") throw HelpRequested(usage_text(first > 1 ? argv[first - 1] : "", specs));
    if (a.rfind("--", 0) != 0) throw UsageError("unexpected argument '" + a + "' (flags start with --)");
    std::string name = a.substr(2);
    std::optional<std::string> inline_value;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const FlagSpec* spec = nullptr;
    for (const auto& s : specs)
      if (s.name == name) spec = &s;
    if (!spec) throw UsageError("unknown flag --" + name);
    if (m_values.count(name) && !spec->repeatable) throw UsageError("flag --" + name + " given more than once");
    if (!spec->takes_value) {
      if (inline_value) throw UsageError("flag --" + name + " takes no value");
      m_values[name].push_back("");
      continue;
    }
    if (inline_value) {
      m_values[name].push_back(*inline_value);
    } else {
      if (i + 1 >= argc) throw UsageError("flag --" + name + " needs a value");
      m_values[name].push_back(argv[++i]);
    }
  }
}

std::string Args::str(const std::string& name, const std::string& fallback) const {
  auto it = m_values.find(name);
  return it == m_values.end() ? fallback : it->second.back();
}

std::string Args::required(const std::string& name) const {
  auto it = m_values.find(name);
  if (it == m_values.end()) throw UsageError("missing required flag --" + name);
  return it->second.back();
}

std::vector<std::string> Args::all(const std::string& name) const {
  auto it = m_values.find(name);
  return it == m_values.end() ? std::vector<std::string>{} : it->second;
}

long long Args::integer(const std::string& name, long long fallback, long long min, long long max) const {
  if (!has(name)) return fallback;
  const std::string v = str(name);
  errno = 0;
  char* end = nullptr;
  const long long r = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE)
    throw UsageError("--" + name + " must be an integer, got '" + v + "'");
  if (r < min || r > max)
    throw UsageError("--" + name + " must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + v);
  return r;
}

double Args::number(const std::string& name, double fallback, double min, double max) const {
  if (!has(name)) return fallback;
  const std::string v = str(name);
  errno = 0;
  char* end = nullptr;
  const double r = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(r))
    throw UsageError("--" + name + " must be a number, got '" + v + "'");
  if (r < min || r > max) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "--%s must be in [%g, %g], got %s", name.c_str(), min, max, v.c_str());
    throw UsageError(buf);
  }
  return r;
}

std::string usage_text(const std::string& command, const std::vector<FlagSpec>& specs) {
  std::string s = "usage: llm-workbench-cli " + command;
  for (const auto& f : specs) s += " [--" + f.name + (f.takes_value ? " X]" : "]");
  s += "\n";
  for (const auto& f : specs) s += "  --" + f.name + (f.takes_value ? " X" : "") + "\t" + f.help + "\n";
  return s;
}

}  // namespace wb::cli
