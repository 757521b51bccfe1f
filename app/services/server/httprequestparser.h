// HttpRequestParser: reads one HTTP/1.1 request from the bytes of a connection as they arrive.
//
// Why our own and not QHttpServer: the API streams server-sent events for as long as a reply takes and must notice
// at once when a client goes away (to cancel its generation and free the slot); Qt 6.4's QHttpServer hides the
// socket behind its responder. The parser is small, bounded and fuzzed (tests/fuzz): the request line and headers
// may take kMaxHeaderBytes, the body (Content-Length only; chunked request bodies are refused) kMaxBodyBytes, and
// every count is checked before it is used.
//
// Invariants
// - feed() may be given the bytes in any split; the result is the same as for one piece.
// - Once Complete or Failed, the parser ignores further bytes (one request per connection: the server answers
//   with "Connection: close").
#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>

struct HttpRequest {
  QByteArray method;  // upper case as sent, e.g. "POST"
  QByteArray path;    // without the query string
  QByteArray query;   // after '?', "" when none
  QList<QPair<QByteArray, QByteArray>> headers;  // names lower-cased, values trimmed
  QByteArray body;
  // The first header of this name (lower case), or an empty array.
  QByteArray header(const QByteArray& name) const;
};

class HttpRequestParser {
 public:
  static constexpr qsizetype kMaxHeaderBytes = 32 * 1024;
  static constexpr qsizetype kMaxBodyBytes = 8 * 1024 * 1024;

  enum class State { Incomplete, Complete, Failed };

  State feed(const QByteArray& bytes);
  State state() const { return m_state; }
  const HttpRequest& request() const { return m_request; }
  // When Failed: the status to answer (400, 411, 413, 431, 501, 505) and why, in one sentence.
  int errorStatus() const { return m_errorStatus; }
  const QByteArray& errorMessage() const { return m_errorMessage; }

 private:
  State fail(int status, const char* message);
  State parseHead(const QByteArray& head);

  State m_state = State::Incomplete;
  QByteArray m_buffer;
  bool m_headDone = false;
  qsizetype m_bodyLength = 0;
  HttpRequest m_request;
  int m_errorStatus = 0;
  QByteArray m_errorMessage;
};
