#include "core/yaml/emit.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

#include "core/utf8.h"
#include "core/yaml/budget.h"
#include "core/yaml/scalar.h"

namespace fluxop::yaml {

namespace {

constexpr int kIndent = 2;
constexpr int kBestWidth = 80;
constexpr std::size_t kMaxSimpleKeyLength = 128;

// ---- UTF-8 helpers -------------------------------------------------------

int utf8_width(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 0;
}

// Character classes of the YAML emitter, on valid UTF-8 at position i.
bool is_break_at(std::string_view s, std::size_t i) {
  auto c = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  if (s[i] == '\r' || s[i] == '\n') return true;
  if (c(0) == 0xC2 && i + 1 < s.size() && c(1) == 0x85) return true;
  return c(0) == 0xE2 && i + 2 < s.size() && c(1) == 0x80 && (c(2) == 0xA8 || c(2) == 0xA9);
}

bool is_space_at(std::string_view s, std::size_t i) { return i < s.size() && s[i] == ' '; }

bool is_blank_at(std::string_view s, std::size_t i) {
  return i < s.size() && (s[i] == ' ' || s[i] == '\t');
}

bool is_bom_at(std::string_view s, std::size_t i) { return s.substr(i, 3) == "\xEF\xBB\xBF"; }

bool is_printable_at(std::string_view s, std::size_t i) {
  auto c = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char b = c(0);
  if (b == 0x0A || (b >= 0x20 && b <= 0x7E)) return true;
  if (b == 0xC2) return c(1) >= 0xA0;
  if (b > 0xC2 && b < 0xED) return true;
  if (b == 0xED) return c(1) < 0xA0;
  if (b == 0xEE) return true;
  if (b == 0xEF)
    return !(c(1) == 0xBB && c(2) == 0xBF) && !(c(1) == 0xBF && (c(2) == 0xBE || c(2) == 0xBF));
  return false;
}

std::size_t width_at(std::string_view s, std::size_t i) {
  return static_cast<std::size_t>(std::max(1, utf8_width(static_cast<unsigned char>(s[i]))));
}

// ---- Scalar analysis -----------------------------------------------------

// Bytes that, past the first character, the analysis can take in runs:
// printable ASCII other than ':' and '#'. Of them only the space matters,
// and only at a run's ends (next to a line break or '#', or at the end).
constexpr auto kQuietBytes = [] {
  std::array<bool, 256> quiet{};
  for (int b = 0x20; b <= 0x7E; ++b) quiet[b] = b != ':' && b != '#';
  return quiet;
}();

// Which scalar styles can represent a string (the YAML emitter's rules).
struct ScalarAnalysis {
  bool multiline = false;
  bool block_plain_allowed = true;
  bool single_quoted_allowed = true;
  bool block_allowed = true;
};

ScalarAnalysis analyze(std::string_view s) {
  ScalarAnalysis a;
  if (s.empty()) {
    a.block_allowed = false;
    return a;
  }
  bool indicators = s.substr(0, 3) == "---" || s.substr(0, 3) == "...";
  bool line_breaks = false, special = false;
  bool leading_space = false, leading_break = false, trailing_space = false, trailing_break = false;
  bool break_space = false, space_break = false, previous_space = false, previous_break = false;
  bool preceded_by_whitespace = true;
  auto followed_by_whitespace = [&](std::size_t next) {
    return next >= s.size() || is_blank_at(s, next);
  };
  // One pass; ASCII, nearly all of what Kubernetes objects hold, is
  // classified by its byte alone, and quiet runs of it skipped at once.
  auto byte_at = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  for (std::size_t i = 0, w; i < s.size(); i += w) {
    auto b = byte_at(i);
    if (i > 0 && kQuietBytes[b]) {
      if (b == ' ' && previous_break) break_space = true;
      std::size_t end = i + 1;
      while (end < s.size() && kQuietBytes[byte_at(end)]) ++end;
      w = end - i;
      bool ends_in_space = s[end - 1] == ' ';
      if (ends_in_space && end == s.size()) trailing_space = true;
      previous_space = preceded_by_whitespace = ends_in_space;
      previous_break = false;
      continue;
    }
    bool ascii = b < 0x80;
    w = ascii ? 1 : width_at(s, i);
    if (i == 0) {
      if (std::string_view("#,[]{}&*!|>'\"%@`").find(s[0]) != std::string_view::npos)
        indicators = true;
      if ((b == '?' || b == ':' || b == '-') && followed_by_whitespace(w)) indicators = true;
    } else if ((b == ':' && followed_by_whitespace(i + 1)) ||
               (b == '#' && preceded_by_whitespace)) {
      indicators = true;
    }
    bool printable = ascii ? b == '\n' || (b >= 0x20 && b <= 0x7E) : is_printable_at(s, i);
    if (!printable) special = true;
    bool line_break = ascii ? b == '\n' || b == '\r' : is_break_at(s, i);
    if (b == ' ') {
      if (i == 0) leading_space = true;
      if (i + w == s.size()) trailing_space = true;
      if (previous_break) break_space = true;
      previous_space = true;
      previous_break = false;
    } else if (line_break) {
      line_breaks = true;
      if (i == 0) leading_break = true;
      if (i + w == s.size()) trailing_break = true;
      if (previous_space) space_break = true;
      previous_space = false;
      previous_break = true;
    } else {
      previous_space = previous_break = false;
    }
    preceded_by_whitespace = b == ' ' || b == '\t' || line_break;
  }
  a.multiline = line_breaks;
  if (leading_space || leading_break || trailing_space || trailing_break || line_breaks ||
      indicators) {
    a.block_plain_allowed = false;
  }
  if (trailing_space) a.block_allowed = false;
  if (break_space) a.block_plain_allowed = a.single_quoted_allowed = false;
  if (space_break || special) {
    a.block_plain_allowed = a.single_quoted_allowed = a.block_allowed = false;
  }
  return a;
}

// The style yaml.v2 writes a string in: what the encoder asks for, then
// downgraded by what the emitter allows.
// Words such as "flux-system" or "apps/v1": nothing in them needs quoting
// unless yaml.v2 reads them as a bool or null ("yes", "on", "null").
bool is_plain_word(std::string_view s) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (s.empty() || !letter(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) {
    return letter(c) || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '/';
  });
}

Style string_style(std::string_view s, bool simple_key) {
  if (is_plain_word(s)) {
    return s.size() <= 5 && plain_is_non_string_v2(s) ? Style::DoubleQuoted : Style::Plain;
  }
  ScalarAnalysis a = analyze(s);
  Style style = s.find('\n') != std::string_view::npos ? Style::Literal
                : plain_is_non_string_v2(s)            ? Style::DoubleQuoted
                                                       : Style::Plain;
  if (style == Style::Plain) {
    if (!a.block_plain_allowed || (simple_key && a.multiline)) style = Style::SingleQuoted;
  }
  if (style == Style::SingleQuoted && (!a.single_quoted_allowed || (simple_key && a.multiline))) {
    style = Style::DoubleQuoted;
  }
  if (style == Style::Literal && (!a.block_allowed || simple_key)) style = Style::DoubleQuoted;
  return style;
}

// ---- The emitter ---------------------------------------------------------

bool is_ascii(std::string_view s) {
  // No early exit: the loop vectorises, and nearly every text is ASCII.
  unsigned char all_bits = 0;
  for (char c : s) all_bits |= static_cast<unsigned char>(c);
  return all_bits < 0x80;
}

// `text`, or its repair into `storage` when it is not valid UTF-8 (nodes
// built in code may hold anything; what the parser reads is valid).
std::string_view valid_text(const std::string& text, std::string& storage) {
  if (is_ascii(text) || !first_invalid_utf8(text)) return text;
  storage = to_valid_utf8(text);
  return storage;
}

class Emitter {
 public:
  explicit Emitter(std::string& out) : out_(out) {}

  void document(const Node& node) {
    node_value(node, -1, Context::Root);
    write_indent(0);
  }

 private:
  enum class Context { Root, MapValue, SeqItem };

  // Writes a node that follows a key indicator, a "-" or the document start.
  // `parent_indent` is the indent of the enclosing block (-1 at the root).
  void node_value(const Node& node, int parent_indent, Context context) {
    switch (node.kind()) {
      case Node::Kind::Map:
        if (node.size() == 0) return flow_empty("{}");
        return block_map(node, parent_indent < 0 ? 0 : parent_indent + kIndent);
      case Node::Kind::Sequence: {
        if (node.size() == 0) return flow_empty("[]");
        // Sequences under a mapping key are not indented.
        int indent = parent_indent < 0              ? 0
                     : context == Context::MapValue ? parent_indent
                                                    : parent_indent + kIndent;
        return block_sequence(node, indent);
      }
      case Node::Kind::Null:
        return scalar("null", Style::Plain, scalar_indent(parent_indent), false);
      case Node::Kind::Scalar:
        return typed_scalar(node, scalar_indent(parent_indent));
    }
  }

  // Continuation lines of a scalar are indented one step past its parent.
  static int scalar_indent(int parent_indent) {
    return parent_indent < 0 ? kIndent : parent_indent + kIndent;
  }

  void block_map(const Node& node, int indent) {
    // The map's entries in key order, on top of the stack that enclosing
    // maps share (indices, not iterators: nested maps grow it).
    std::size_t begin = key_order_.size();
    for (const auto& e : node.entries()) key_order_.push_back(&e);
    sort_keys(key_order_.begin() + static_cast<std::ptrdiff_t>(begin), key_order_.end());
    std::size_t end = key_order_.size();
    for (std::size_t i = begin; i < end; ++i) {
      const Node::Entry* entry = key_order_[i];
      write_indent(indent);
      std::string repaired;
      std::string_view key = valid_text(entry->first, repaired);
      if (key.size() > kMaxSimpleKeyLength || key.find('\n') != std::string_view::npos) {
        complex_key(key, entry->second, indent);
        continue;
      }
      // A plain "<<" key would read back as a merge key.
      Style style = key == "<<" ? Style::DoubleQuoted : string_style(key, true);
      scalar(key, style, indent, true);
      write_indicator(":", false, false, false);
      node_value(entry->second, indent, Context::MapValue);
    }
    key_order_.resize(begin);
  }

  // A stable sort by key_less. Maps come mostly in order and small: an
  // insertion sort does n - 1 comparisons on them and allocates nothing.
  using EntryIterator = std::vector<const Node::Entry*>::iterator;
  static void sort_keys(EntryIterator first, EntryIterator last) {
    auto less = [](const Node::Entry* a, const Node::Entry* b) {
      return key_less(a->first, b->first);
    };
    constexpr std::ptrdiff_t kInsertionSortSize = 32;
    if (last - first > kInsertionSortSize) return std::stable_sort(first, last, less);
    for (auto it = first; it != last; ++it) {
      const Node::Entry* entry = *it;
      auto hole = it;
      for (; hole != first && less(entry, *(hole - 1)); --hole) *hole = *(hole - 1);
      *hole = entry;
    }
  }

  // Keys too long or multi-line for the "key: value" form.
  void complex_key(std::string_view key, const Node& value, int indent) {
    write_indicator("?", true, false, true);
    scalar(key, string_style(key, false), indent + kIndent, false);
    write_indent(indent);
    write_indicator(":", true, false, true);
    node_value(value, indent, Context::MapValue);
  }

  void block_sequence(const Node& node, int indent) {
    for (const Node& item : node.items()) {
      write_indent(indent);
      write_indicator("-", true, false, true);
      node_value(item, indent, Context::SeqItem);
    }
  }

  void flow_empty(std::string_view braces) {
    write_indicator(braces.substr(0, 1), true, true, false);
    write_indicator(braces.substr(1), false, false, false);
  }

  void typed_scalar(const Node& node, int indent) {
    if (node.tag() == Tag::String) {
      std::string repaired;
      std::string_view text = valid_text(node.text(), repaired);
      return scalar(text, string_style(text, false), indent, false);
    }
    std::string text = canonical_text(node);
    // Timestamps travel as strings through JSON.
    Style style = node.tag() == Tag::Timestamp ? string_style(text, false) : Style::Plain;
    scalar(text, style, indent, false);
  }

  void scalar(std::string_view s, Style style, int indent, bool simple_key) {
    bool allow_breaks = !simple_key;
    switch (style) {
      case Style::Plain:
        return plain(s, indent, allow_breaks);
      case Style::SingleQuoted:
        return single_quoted(s, indent, allow_breaks);
      case Style::DoubleQuoted:
        return double_quoted(s, indent, allow_breaks);
      case Style::Literal:
      case Style::Folded:
        return literal(s, indent);
    }
  }

  void plain(std::string_view s, int indent, bool allow_breaks) {
    if (!whitespace_) put(' ');
    bool spaces = false;
    for (std::size_t i = 0; i < s.size();) {
      if (s[i] == ' ') {
        if (allow_breaks && !spaces && column_ > kBestWidth && !is_space_at(s, i + 1)) {
          write_indent(indent);
          ++i;
        } else {
          write_char(s, i);
        }
        spaces = true;
      } else {
        i = write_run(s, i, [](unsigned char b) { return b == ' '; });
        indention_ = false;
        spaces = false;
      }
    }
    whitespace_ = false;
    indention_ = false;
  }

  void single_quoted(std::string_view s, int indent, bool allow_breaks) {
    write_indicator("'", true, false, false);
    bool spaces = false, breaks = false;
    for (std::size_t i = 0; i < s.size();) {
      if (s[i] == ' ') {
        if (allow_breaks && !spaces && column_ > kBestWidth && i > 0 && i + 1 < s.size() &&
            !is_space_at(s, i + 1)) {
          write_indent(indent);
          ++i;
        } else {
          write_char(s, i);
        }
        spaces = true;
      } else if (is_break_at(s, i)) {
        if (!breaks && s[i] == '\n') put_break();
        write_break(s, i);
        indention_ = true;
        breaks = true;
      } else {
        if (breaks) write_indent(indent);
        if (s[i] == '\'') put('\'');
        i = write_run(s, i, [](unsigned char b) { return b == ' ' || b == '\'' || may_break(b); });
        indention_ = false;
        spaces = breaks = false;
      }
    }
    write_indicator("'", false, false, false);
    whitespace_ = false;
    indention_ = false;
  }

  void double_quoted(std::string_view s, int indent, bool allow_breaks) {
    write_indicator("\"", true, false, false);
    bool spaces = false;
    for (std::size_t i = 0; i < s.size();) {
      if (!is_printable_at(s, i) || is_bom_at(s, i) || is_break_at(s, i) || s[i] == '"' ||
          s[i] == '\\') {
        i = escape(s, i);
        spaces = false;
      } else if (s[i] == ' ') {
        if (allow_breaks && !spaces && column_ > kBestWidth && i != 0 && i + 1 != s.size()) {
          write_indent(indent);
          if (is_space_at(s, i + 1)) put('\\');
          ++i;
        } else {
          write_char(s, i);
        }
        spaces = true;
      } else {
        i = write_run(s, i, [](unsigned char b) {
          return b == ' ' || b == '"' || b == '\\' || b < 0x20 || b > 0x7E;
        });
        spaces = false;
      }
    }
    write_indicator("\"", false, false, false);
    whitespace_ = false;
    indention_ = false;
  }

  // Writes the escape sequence for the character at i; returns the next index.
  std::size_t escape(std::string_view s, std::size_t i) {
    std::size_t w = width_at(s, i);
    auto lead = static_cast<unsigned char>(s[i]);
    std::uint32_t cp = w == 1 ? lead : (lead & (0x7F >> w));
    for (std::size_t k = 1; k < w; ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    put('\\');
    switch (cp) {
      case 0x00:
        put('0');
        break;
      case 0x07:
        put('a');
        break;
      case 0x08:
        put('b');
        break;
      case 0x09:
        put('t');
        break;
      case 0x0A:
        put('n');
        break;
      case 0x0B:
        put('v');
        break;
      case 0x0C:
        put('f');
        break;
      case 0x0D:
        put('r');
        break;
      case 0x1B:
        put('e');
        break;
      case 0x22:
        put('"');
        break;
      case 0x5C:
        put('\\');
        break;
      case 0x85:
        put('N');
        break;
      case 0xA0:
        put('_');
        break;
      case 0x2028:
        put('L');
        break;
      case 0x2029:
        put('P');
        break;
      default: {
        int digits = cp <= 0xFF ? 2 : cp <= 0xFFFF ? 4 : 8;
        put(digits == 2 ? 'x' : digits == 4 ? 'u' : 'U');
        for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) {
          put("0123456789ABCDEF"[(cp >> shift) & 0xF]);
        }
      }
    }
    return i + w;
  }

  void literal(std::string_view s, int indent) {
    write_indicator("|", true, false, false);
    if (!s.empty() && (s[0] == ' ' || is_break_at(s, 0))) {
      write_indicator(std::string(1, static_cast<char>('0' + kIndent)), false, false, false);
    }
    write_chomping_hint(s);
    put_break();
    indention_ = whitespace_ = true;
    bool breaks = true;
    for (std::size_t i = 0; i < s.size();) {
      if (is_break_at(s, i)) {
        write_break(s, i);
        indention_ = true;
        breaks = true;
      } else {
        if (breaks) {
          write_indent(indent);
          breaks = false;
        }
        i = write_run(s, i, may_break);
        indention_ = false;
      }
    }
  }

  void write_chomping_hint(std::string_view s) {
    if (s.empty()) return write_indicator("-", false, false, false);
    std::size_t last = s.size() - 1;
    while (last > 0 && (static_cast<unsigned char>(s[last]) & 0xC0) == 0x80) --last;
    if (!is_break_at(s, last)) return write_indicator("-", false, false, false);
    if (last == 0) return write_indicator("+", false, false, false);
    std::size_t prev = last - 1;
    while (prev > 0 && (static_cast<unsigned char>(s[prev]) & 0xC0) == 0x80) --prev;
    if (is_break_at(s, prev)) write_indicator("+", false, false, false);
  }

  // ---- low-level output (column and whitespace tracking) ----

  void put(char c) {
    out_ += c;
    ++column_;
  }

  void put_break() {
    out_ += '\n';
    column_ = 0;
  }

  // Whether a byte may start a line break: "\r", "\n", or the lead byte of
  // NEL, LS or PS.
  static bool may_break(unsigned char b) {
    return b == '\n' || b == '\r' || b == 0xC2 || b == 0xE2;
  }

  // Writes the character at i, which needs no special handling, and the
  // ones after it up to the first byte `stop` accepts; returns the index
  // after them. Each UTF-8 character is one column.
  template <typename Stop>
  std::size_t write_run(std::string_view s, std::size_t i, Stop stop) {
    std::size_t end = i + width_at(s, i);
    while (end < s.size() && !stop(static_cast<unsigned char>(s[end]))) ++end;
    std::string_view run = s.substr(i, end - i);
    out_.append(run);
    column_ += static_cast<int>(
        std::count_if(run.begin(), run.end(), [](char c) { return (c & 0xC0) != 0x80; }));
    return end;
  }

  void write_char(std::string_view s, std::size_t& i) {
    std::size_t w = width_at(s, i);
    out_.append(s.substr(i, w));
    ++column_;
    i += w;
  }

  void write_break(std::string_view s, std::size_t& i) {
    if (s[i] == '\n') {
      put_break();
      ++i;
    } else {
      std::size_t w = width_at(s, i);
      out_.append(s.substr(i, w));
      column_ = 0;
      i += w;
    }
  }

  void write_indent(int indent) {
    if (!indention_ || column_ > indent || (column_ == indent && !whitespace_)) put_break();
    if (column_ < indent) {
      out_.append(static_cast<std::size_t>(indent - column_), ' ');
      column_ = indent;
    }
    whitespace_ = indention_ = true;
  }

  void write_indicator(std::string_view indicator, bool need_whitespace, bool is_whitespace,
                       bool is_indention) {
    if (need_whitespace && !whitespace_) put(' ');
    for (char c : indicator) put(c);
    whitespace_ = is_whitespace;
    indention_ = indention_ && is_indention;
  }

  static bool key_less(std::string_view a, std::string_view b);

  std::string& out_;
  std::vector<const Node::Entry*> key_order_;
  int column_ = 0;
  bool whitespace_ = true;
  bool indention_ = true;
};

bool is_letter(char32_t r) {
  // ASCII letters plus every non-ASCII code point that is alphabetic; keys
  // in Kubernetes objects are ASCII in practice.
  return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= 0xAA && r != 0xD7 && r != 0xF7);
}

std::u32string runes(std::string_view s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t w = width_at(s, i);
    auto lead = static_cast<unsigned char>(s[i]);
    char32_t cp = w == 1 ? lead : (lead & (0x7F >> w));
    for (std::size_t k = 1; k < w && i + k < s.size(); ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    }
    out += cp;
    i += w;
  }
  return out;
}

bool is_rune_digit(char32_t r) { return r >= '0' && r <= '9'; }

// yaml.v2's key order: letters after other characters, and runs of digits
// compared by their numeric value. `S` is a sequence of code points.
template <typename S>
bool yaml_v2_less(const S& a, const S& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] == b[i]) continue;
    auto ar = static_cast<char32_t>(a[i]), br = static_cast<char32_t>(b[i]);
    bool al = is_letter(ar), bl = is_letter(br);
    if (al && bl) return ar < br;
    if (al || bl) return bl;
    std::int64_t an = 0, bn = 0;
    if (ar == '0' || br == '0') {
      for (std::size_t j = i; j-- > 0 && is_rune_digit(static_cast<char32_t>(a[j]));) {
        if (a[j] != '0') {
          an = bn = 1;
          break;
        }
      }
    }
    // Go wraps numbers past 64 bits; saturating keeps the order transitive.
    auto accumulate = [](std::int64_t n, char32_t digit) {
      constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
      return n > (kMax - 9) / 10 ? kMax : n * 10 + (digit - '0');
    };
    std::size_t ai = i, bi = i;
    for (; ai < a.size() && is_rune_digit(static_cast<char32_t>(a[ai])); ++ai) {
      an = accumulate(an, static_cast<char32_t>(a[ai]));
    }
    for (; bi < b.size() && is_rune_digit(static_cast<char32_t>(b[bi])); ++bi) {
      bn = accumulate(bn, static_cast<char32_t>(b[bi]));
    }
    if (an != bn) return an < bn;
    if (ai != bi) return ai < bi;
    return ar < br;
  }
  return a.size() < b.size();
}

bool Emitter::key_less(std::string_view a, std::string_view b) {
  // Kubernetes keys are ASCII: compare their bytes as code points directly.
  if (is_ascii(a) && is_ascii(b)) return yaml_v2_less(a, b);
  return yaml_v2_less(runes(a), runes(b));
}

}  // namespace

void emit_to(std::string& out, const Node& document) {
  // Each line is indented by its depth: bounded, the text grows with the
  // nodes, not with their square (and the emitter's recursion is bounded).
  check_depth(document);
  Emitter(out).document(document);
}

std::string emit(const Node& document) {
  std::string out;
  emit_to(out, document);
  return out;
}

std::string emit_stream(const std::vector<Node>& documents) {
  std::string out;
  for (std::size_t i = 0; i < documents.size(); ++i) {
    if (i > 0) out += "---\n";
    emit_to(out, documents[i]);
  }
  return out;
}

}  // namespace fluxop::yaml
