// libFuzzer target: the API server's HTTP/1.1 request parser (app/services/server/httprequestparser), fed as a
// socket delivers: in pieces cut at fuzzed points. Input: two bytes seeding the cuts, then the bytes of the
// connection.
//
// Oracles beyond "no crash":
//   - the request fed in pieces gives exactly what it gives fed whole (state, request, error, consumed);
//   - after every piece: consumed() <= bytes fed, buffered() <= consumed(), and the head is never held beyond
//     kMaxHeaderBytes nor the body beyond its Content-Length (limits answer 431 / 413, memory does not grow);
//   - once Complete or Failed, further bytes change nothing;
//   - a Complete request is what the bytes say: consumed() is the head (up to the first empty line) plus exactly
//     Content-Length bytes, the body is those bytes, names are lower-case tokens, values carry no control character;
//   - a Failed request answers one of the statuses the server knows, with a message.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "services/server/httprequestparser.h"

namespace {

using State = HttpRequestParser::State;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// Pieces from 1 byte to a few KiB, as a socket hands them out.
struct Cuts {
  uint32_t state;
  size_t next(size_t left) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    const uint32_t r = state;
    size_t n = 0;
    switch (r & 3) {
      case 0: n = 1; break;
      case 1: n = 1 + (r >> 2) % 16; break;
      case 2: n = 1 + (r >> 2) % 512; break;
      default: n = 1 + (r >> 2) % 8192; break;
    }
    return n < left ? n : left;
  }
};

void checkBounds(const HttpRequestParser& p, size_t fed) {
  check(p.consumed() <= fed);
  check(p.buffered() <= p.consumed());
  // The head while it arrives, else the body, which never outgrows its Content-Length.
  check(p.buffered() <= HttpRequestParser::kMaxHeaderBytes ||
        (p.buffered() == p.request().body.size() && p.buffered() <= HttpRequestParser::kMaxBodyBytes));
}

bool sameRequest(const HttpRequest& a, const HttpRequest& b) {
  return a.method == b.method && a.path == b.path && a.query == b.query && a.headers == b.headers && a.body == b.body;
}

void checkComplete(const HttpRequestParser& p, std::string_view input) {
  const HttpRequest& r = p.request();
  const size_t headEnd = input.find("\r\n\r\n");
  check(headEnd != std::string_view::npos);
  const size_t headBytes = headEnd + 4;
  check(headBytes <= HttpRequestParser::kMaxHeaderBytes);
  check(p.consumed() == headBytes + r.body.size());
  check(input.substr(headBytes, r.body.size()) == r.body);
  check(!r.method.empty() && !r.path.empty() && r.path.front() == '/');
  for (const char c : r.method) check(c >= 'A' && c <= 'Z');
  const std::string_view length = r.header("content-length");
  if (length.empty()) {
    check(r.body.empty());
    check(r.method != "POST" && r.method != "PUT");
  } else {
    size_t n = 0;
    for (const char c : length) n = n * 10 + size_t(c - '0');
    check(n == r.body.size());
  }
  check(r.header("transfer-encoding").empty());
  for (const auto& [name, value] : r.headers) {
    check(!name.empty());
    for (const char c : name) check(c > ' ' && c < 127 && c != ':' && !(c >= 'A' && c <= 'Z'));
    for (const char c : value) check(c == '\t' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f));
    check(value.empty() || (value.front() != ' ' && value.back() != ' '));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 2, size - 2);

  HttpRequestParser whole;
  whole.feed(input);
  checkBounds(whole, input.size());

  HttpRequestParser pieces;
  Cuts cuts{0x9e3779b9u ^ (uint32_t(data[0]) << 8 | data[1])};
  size_t fed = 0;
  while (fed < input.size()) {
    const size_t n = cuts.next(input.size() - fed);
    const State before = pieces.state();
    const size_t consumedBefore = pieces.consumed();
    pieces.feed(input.substr(fed, n));
    fed += n;
    checkBounds(pieces, fed);
    if (before != State::Incomplete) check(pieces.state() == before && pieces.consumed() == consumedBefore);
  }
  pieces.feed({});  // an empty read changes nothing
  check(pieces.state() == whole.state());
  check(pieces.consumed() == whole.consumed());
  check(pieces.errorStatus() == whole.errorStatus() && pieces.errorMessage() == whole.errorMessage());
  check(sameRequest(pieces.request(), whole.request()));

  switch (whole.state()) {
    case State::Complete: checkComplete(whole, input); break;
    case State::Failed: {
      const int s = whole.errorStatus();
      check(s == 400 || s == 411 || s == 413 || s == 431 || s == 501 || s == 505);
      check(!whole.errorMessage().empty());
      if (s == 431) check(whole.consumed() == HttpRequestParser::kMaxHeaderBytes);
      break;
    }
    case State::Incomplete:
      // Nothing refused yet: every byte is held, and the head's limit has not been reached.
      check(whole.consumed() == input.size());
      check(input.find("\r\n\r\n") != std::string_view::npos || input.size() < HttpRequestParser::kMaxHeaderBytes);
      break;
  }
  return 0;
}
