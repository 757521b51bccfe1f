// HttpRequestParser: reads one HTTP/1.1 request from the bytes of a connection as they arrive.
//
// Why our own and not QHttpServer: the API streams server-sent events for as long as a reply takes and must notice
// at once when a client goes away (to cancel its generation and free the slot); Qt 6.4's QHttpServer hides the
// socket behind its responder. The parser is small, bounded, free of Qt (plain std::string, so the fuzz build, which
// has no Qt, runs it: tests/fuzz/fuzz_http_request.cpp) and strict where leniency lets two parsers disagree about
// where a request ends (RFC 9112 §2.2, §5.1, §6.3): no whitespace before a header's colon, no folded lines, no
// control characters in the target or in values, one Content-Length of digits only, no Transfer-Encoding.
//
// Invariants
// - feed() may be given the bytes in any split; state, request, error and consumed() are the same as for one piece.
// - Memory is bounded by the limits, not by what a client sends: the head (request line, headers and the empty line
//   ending them) is buffered up to kMaxHeaderBytes, the body up to its Content-Length (at most kMaxBodyBytes);
//   bytes beyond are not taken (431 / 413 instead of growth).
// - Once Complete or Failed, the parser ignores further bytes (one request per connection: the server answers
//   with "Connection: close").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct HttpRequest {
  std::string method;  // upper case as sent, e.g. "POST"
  std::string path;    // without the query string
  std::string query;   // after '?', "" when none
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, values without surrounding blanks
  std::string body;
  // The first header of this name (lower case), or "".
  std::string_view header(std::string_view name) const;
};

class HttpRequestParser {
 public:
  static constexpr size_t kMaxHeaderBytes = 32 * 1024;
  static constexpr size_t kMaxBodyBytes = 8 * 1024 * 1024;

  enum class State { Incomplete, Complete, Failed };

  State feed(std::string_view bytes);
  State state() const { return m_state; }
  const HttpRequest& request() const { return m_request; }
  // The head (request line and headers) has arrived and passed; request() holds all but the body.
  bool headComplete() const { return m_headDone; }
  // Bytes of everything fed so far that belong to this request: all of them while Incomplete; the head and exactly
  // Content-Length body bytes once Complete (bytes after it, e.g. a pipelined second request, are not read); the
  // bytes looked at when Failed.
  size_t consumed() const { return m_consumed; }
  // Bytes held while waiting for the rest of the request (never more than the limits above).
  size_t buffered() const { return m_head.size() + m_request.body.size(); }
  // When Failed: the status to answer (400, 411, 413, 431, 501, 505) and why, in one sentence.
  int errorStatus() const { return m_errorStatus; }
  const std::string& errorMessage() const { return m_errorMessage; }

 private:
  State fail(int status, const char* message);
  State parseHead(std::string_view head);
  State parseHeaderLine(std::string_view line, bool& haveLength);
  State takeBody(std::string_view bytes);

  State m_state = State::Incomplete;
  std::string m_head;  // the head's bytes until its empty line has arrived
  bool m_headDone = false;
  size_t m_bodyLength = 0;
  size_t m_consumed = 0;
  HttpRequest m_request;
  int m_errorStatus = 0;
  std::string m_errorMessage;
};
