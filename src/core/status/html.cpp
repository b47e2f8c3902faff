#include "core/status/html.h"

#include "core/error.h"

namespace fluxop::status {

std::string escape_html(std::string_view text) {
  std::string shown = printable(text);
  std::string out;
  out.reserve(shown.size());
  for (char c : shown) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

Escaped text(std::string_view value) { return Escaped(escape_html(value)); }

Escaped number(std::int64_t value) { return Escaped(std::to_string(value)); }

Html& Html::operator<<(Markup markup) {
  out_ += markup.text();
  return *this;
}

Html& Html::operator<<(const Escaped& escaped) {
  out_ += escaped.str();
  return *this;
}

Html& Html::operator<<(const Html& fragment) {
  out_ += fragment.out_;
  return *this;
}

}  // namespace fluxop::status
