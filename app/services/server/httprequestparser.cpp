// HttpRequestParser: request line, headers, Content-Length body, each bounded.
#include "httprequestparser.h"

#include <algorithm>

QByteArray HttpRequest::header(const QByteArray& name) const {
  for (const auto& [key, value] : headers)
    if (key == name) return value;
  return {};
}

HttpRequestParser::State HttpRequestParser::fail(int status, const char* message) {
  m_state = State::Failed;
  m_errorStatus = status;
  m_errorMessage = message;
  m_buffer.clear();
  return m_state;
}

HttpRequestParser::State HttpRequestParser::feed(const QByteArray& bytes) {
  if (m_state != State::Incomplete) return m_state;
  if (!m_headDone) {
    // Only the part that can still belong to the head is searched, so a slow sender costs linear time.
    const qsizetype searchFrom = std::max<qsizetype>(0, m_buffer.size() - 3);
    m_buffer += bytes;
    const qsizetype end = m_buffer.indexOf("\r\n\r\n", searchFrom);
    if (end < 0) {
      if (m_buffer.size() > kMaxHeaderBytes) return fail(431, "the request's headers are too large");
      return m_state;
    }
    if (end + 4 > kMaxHeaderBytes) return fail(431, "the request's headers are too large");
    if (parseHead(m_buffer.left(end)) == State::Failed) return m_state;
    m_headDone = true;
    m_buffer.remove(0, end + 4);
  } else {
    m_buffer += bytes;
  }
  if (m_buffer.size() > m_bodyLength) m_buffer.truncate(m_bodyLength);  // pipelined bytes are not read
  if (m_buffer.size() < m_bodyLength) return m_state;
  m_request.body = m_buffer;
  m_buffer.clear();
  m_state = State::Complete;
  return m_state;
}

HttpRequestParser::State HttpRequestParser::parseHead(const QByteArray& head) {
  const QList<QByteArray> lines = head.split('\n');
  const QByteArray requestLine = lines.value(0).trimmed();
  const QList<QByteArray> parts = requestLine.split(' ');
  if (parts.size() != 3 || parts[0].isEmpty() || !parts[1].startsWith('/'))
    return fail(400, "the request line is not 'METHOD /path HTTP/1.x'");
  for (const char c : parts[0])
    if (c < 'A' || c > 'Z') return fail(400, "the request method is not an upper-case word");
  if (parts[2] != "HTTP/1.1" && parts[2] != "HTTP/1.0") return fail(505, "only HTTP/1.0 and HTTP/1.1 are served");
  m_request.method = parts[0];
  const qsizetype q = parts[1].indexOf('?');
  m_request.path = q < 0 ? parts[1] : parts[1].left(q);
  m_request.query = q < 0 ? QByteArray() : parts[1].mid(q + 1);
  bool haveLength = false;
  for (qsizetype i = 1; i < lines.size(); ++i) {
    const QByteArray line = lines[i].endsWith('\r') ? lines[i].chopped(1) : lines[i];
    const qsizetype colon = line.indexOf(':');
    if (colon <= 0) return fail(400, "a header line has no name");
    const QByteArray name = line.left(colon).trimmed().toLower();
    for (const char c : name)
      if (c <= ' ' || c >= 127) return fail(400, "a header name has a space or a control character");
    const QByteArray value = line.mid(colon + 1).trimmed();
    if (name == "content-length") {
      if (haveLength) return fail(400, "the request has two Content-Length headers");
      if (value.isEmpty() || value.size() > 12) return fail(400, "Content-Length is not a number");
      qsizetype n = 0;
      for (const char c : value) {
        if (c < '0' || c > '9') return fail(400, "Content-Length is not a number");
        n = n * 10 + (c - '0');  // at most 12 digits: no overflow
      }
      if (n > kMaxBodyBytes) return fail(413, "the request body is larger than 8 MiB");
      m_bodyLength = n;
      haveLength = true;
    } else if (name == "transfer-encoding") {
      return fail(501, "chunked request bodies are not supported; send Content-Length");
    }
    m_request.headers.append({name, value});
  }
  if (!haveLength && (m_request.method == "POST" || m_request.method == "PUT"))
    return fail(411, "a request with a body needs Content-Length");
  return State::Incomplete;
}
