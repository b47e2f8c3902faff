// HTML made of two things only: markup written in fluxopctl's source, and
// text escaped by escape_html(). Every page fluxopctl writes (the fleet file,
// the daemon's status pages) is built as an Html, so a value read from a
// cluster (a message holding "<script>", a quote that would end an
// attribute, a URL with a token, an ANSI escape) cannot become markup: the
// only way from a run-time string into an Html is through the escaper, by
// construction, as printable() is the one way to the terminal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace fluxop::status {

// Text as a page shows it, safe between tags and inside a quoted attribute:
// secrets redacted and control characters escaped as printable() does
// (core/error.h: "\x1b[31m" stays visible text), then &, <, >, " and ' as
// character references.
std::string escape_html(std::string_view text);

// Markup as written in the source. Only a string literal converts to it
// (consteval), so nothing computed at run time is ever taken as markup.
class Markup {
 public:
  template <std::size_t N>
  consteval Markup(const char (&literal)[N])
      : text_(literal, N - 1) {}  // NOLINT: implicit on purpose
  std::string_view text() const { return text_; }

 private:
  std::string_view text_;
};

// Escaped text, made only by text() and number().
class Escaped {
 public:
  const std::string& str() const { return escaped_; }

 private:
  explicit Escaped(std::string escaped) : escaped_(std::move(escaped)) {}
  std::string escaped_;
  friend Escaped text(std::string_view value);
  friend Escaped number(std::int64_t value);
};

// `value` through escape_html().
Escaped text(std::string_view value);
Escaped number(std::int64_t value);

// A page or a fragment of one, appended to in order.
class Html {
 public:
  Html& operator<<(Markup markup);
  Html& operator<<(const Escaped& escaped);
  Html& operator<<(const Html& fragment);
  const std::string& str() const { return out_; }

 private:
  std::string out_;
};

}  // namespace fluxop::status
