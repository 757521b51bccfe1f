// HttpRequestParser: request line, headers, Content-Length body, each bounded.
#include "httprequestparser.h"

#include <algorithm>

namespace {

constexpr std::string_view kHeadEnd = "\r\n\r\n";

// RFC 9110 §5.6.2: the characters of a token (header names).
bool isTokenChar(char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// Control characters (and DEL) other than tab: never part of a target or a header value (RFC 9110 §5.5).
bool isControl(char c) { return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f; }

std::string_view trimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string lowerCase(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}

}  // namespace

std::string_view HttpRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (key == name) return value;
  return {};
}

HttpRequestParser::State HttpRequestParser::fail(int status, const char* message) {
  m_state = State::Failed;
  m_errorStatus = status;
  m_errorMessage = message;
  m_head.clear();
  m_head.shrink_to_fit();
  return m_state;
}

HttpRequestParser::State HttpRequestParser::feed(std::string_view bytes) {
  if (m_state != State::Incomplete) return m_state;
  if (m_headDone) return takeBody(bytes);
  // A head (with its empty line) longer than the limit can never complete: only what fits is taken, so one large
  // piece costs no more memory than many small ones. Only the part that can still hold the empty line is searched,
  // so a slow sender costs linear time.
  const size_t searchFrom = m_head.size() < kHeadEnd.size() ? 0 : m_head.size() - (kHeadEnd.size() - 1);
  const size_t take = std::min(bytes.size(), kMaxHeaderBytes - m_head.size());
  m_head.append(bytes.substr(0, take));
  m_consumed = m_head.size();
  const size_t end = m_head.find(kHeadEnd, searchFrom);
  if (end == std::string::npos) {
    if (m_head.size() >= kMaxHeaderBytes) return fail(431, "the request's headers are too large");
    return m_state;
  }
  const size_t headBytes = end + kHeadEnd.size();
  m_consumed = headBytes;  // what follows the empty line is the body's (or, past Content-Length, no one's)
  if (parseHead(std::string_view(m_head).substr(0, end)) == State::Failed) return m_state;
  m_headDone = true;
  const std::string afterHead = m_head.substr(headBytes);
  m_head.clear();
  m_head.shrink_to_fit();
  m_request.body.reserve(m_bodyLength);
  if (takeBody(afterHead) != State::Incomplete) return m_state;
  return takeBody(bytes.substr(take));
}

HttpRequestParser::State HttpRequestParser::takeBody(std::string_view bytes) {
  const size_t take = std::min(bytes.size(), m_bodyLength - m_request.body.size());
  m_request.body.append(bytes.substr(0, take));
  m_consumed += take;
  if (m_request.body.size() == m_bodyLength) m_state = State::Complete;
  return m_state;
}

HttpRequestParser::State HttpRequestParser::parseHead(std::string_view head) {
  // Lines end at LF; a CR before it is dropped (RFC 9112 §2.2 lets a recipient accept a bare LF). A CR anywhere
  // else is a control character and refused below.
  std::vector<std::string_view> lines;
  for (size_t start = 0;;) {
    const size_t nl = head.find('\n', start);
    std::string_view line = head.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  // "METHOD SP target SP version", single spaces (§3).
  const std::string_view requestLine = lines.front();
  const size_t sp1 = requestLine.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : requestLine.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || requestLine.find(' ', sp2 + 1) != std::string_view::npos)
    return fail(400, "the request line is not 'METHOD /path HTTP/1.x'");
  const std::string_view method = requestLine.substr(0, sp1);
  const std::string_view target = requestLine.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = requestLine.substr(sp2 + 1);
  if (method.empty() || target.empty() || target.front() != '/')
    return fail(400, "the request line is not 'METHOD /path HTTP/1.x'");
  for (const char c : method)
    if (c < 'A' || c > 'Z') return fail(400, "the request method is not an upper-case word");
  for (const char c : target)
    if (isControl(c) || c == '\t') return fail(400, "the request target has a control character");
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return fail(505, "only HTTP/1.0 and HTTP/1.1 are served");
  m_request.method = method;
  const size_t q = target.find('?');
  m_request.path = target.substr(0, q);
  m_request.query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
  bool haveLength = false;
  for (size_t i = 1; i < lines.size(); ++i)
    if (parseHeaderLine(lines[i], haveLength) == State::Failed) return m_state;
  if (!haveLength && (m_request.method == "POST" || m_request.method == "PUT"))
    return fail(411, "a request with a body needs Content-Length");
  return State::Incomplete;
}

HttpRequestParser::State HttpRequestParser::parseHeaderLine(std::string_view line, bool& haveLength) {
  const size_t colon = line.find(':');
  if (colon == 0 || colon == std::string_view::npos) return fail(400, "a header line has no name");
  // No blank before the colon and no folded continuation line: both are refused rather than guessed at (§5.1-5.2).
  for (const char c : line.substr(0, colon))
    if (!isTokenChar(c)) return fail(400, "a header name has a space, a control or a separator character");
  const std::string_view value = trimBlanks(line.substr(colon + 1));
  for (const char c : value)
    if (isControl(c)) return fail(400, "a header value has a control character");
  std::string name = lowerCase(line.substr(0, colon));
  if (name == "content-length") {
    if (haveLength) return fail(400, "the request has two Content-Length headers");
    if (value.empty() || value.size() > 12) return fail(400, "Content-Length is not a number");
    size_t n = 0;
    for (const char c : value) {
      if (c < '0' || c > '9') return fail(400, "Content-Length is not a number");
      n = n * 10 + size_t(c - '0');  // at most 12 digits: no overflow
    }
    if (n > kMaxBodyBytes) return fail(413, "the request body is larger than 8 MiB");
    m_bodyLength = n;
    haveLength = true;
  } else if (name == "transfer-encoding") {
    return fail(501, "chunked request bodies are not supported; send Content-Length");
  }
  m_request.headers.emplace_back(std::move(name), std::string(value));
  return State::Incomplete;
}
