#include "core/yaml/block_reader.h"

#include <cstring>
#include <limits>
#include <string>

#include "core/yaml/budget.h"
#include "core/yaml/scalar.h"

namespace fluxop::yaml {

namespace {

// Where a scalar can only be a key: no line continues it.
constexpr int kKeyOnly = std::numeric_limits<int>::max();

// YAML limits implicit keys to 1024 characters; longer ones go to yaml-cpp.
constexpr std::size_t kMaxKeyLength = 1024;

// Thrown inside the reader when the text leaves its subset.
struct Unsupported {};

[[noreturn]] void unsupported() { throw Unsupported{}; }

// Space and line feed are the only white space the reader knows: tabs, CR
// and the line breaks YAML 1.1 adds (NEL, LS, PS) and a byte order mark are
// left to yaml-cpp, which has its own ways with them.
bool has_only_plain_white_space(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t size = text.size();
  for (std::size_t i = 0; i < size; ++i) {
    unsigned char c = bytes[i];
    if (c < 0x80) {
      if (c == '\t' || c == '\r') return false;
      continue;
    }
    unsigned char next = i + 1 < size ? bytes[i + 1] : 0;
    unsigned char after = i + 2 < size ? bytes[i + 2] : 0;
    if (c == 0xC2 && next == 0x85) return false;                                      // NEL
    if (c == 0xE2 && next == 0x80 && (after == 0xA8 || after == 0xA9)) return false;  // LS, PS
    if (c == 0xEF && next == 0xBB && after == 0xBF) return false;                     // BOM
  }
  return true;
}

bool are_nulls_marked_alike(const Node& a, const Node& b) {
  return a.is_null() && b.is_null() && a.mark.line == b.mark.line && a.mark.column == b.mark.column;
}

// A scalar, and whether a ": " after it makes it a key.
struct ScalarToken {
  Node node;
  bool is_key = false;
};

// Reads the text line by line with one cursor. Every node's mark is where
// yaml-cpp puts it: a scalar's or a collection's first character, and for
// a null left empty, the next token (or the end of the stream).
class BlockReader {
 public:
  BlockReader(std::string_view text, std::size_t max_nodes) : text_(text), max_nodes_(max_nodes) {}

  // yaml-cpp's document structure: an optional "---", a node (null when a
  // marker or the end comes first), then any number of "...".
  std::vector<Node> documents() {
    std::vector<Node> documents;
    while (skip_to_content()) {
      if (at_marker("---")) consume_marker_line();
      if (!skip_to_content()) {
        documents.push_back(null_at_end());
      } else if (at_marker("---") || at_marker("...")) {
        documents.push_back(null_at_next_token());
      } else {
        documents.push_back(read_root());
      }
      // Two null documents marked alike are how parse.cpp tells yaml-cpp
      // stuck on a token ("---" at the very end makes them too).
      if (documents.size() > 1 && are_nulls_marked_alike(documents.end()[-2], documents.back()))
        unsupported();
      while (skip_to_content() && at_marker("...")) consume_marker_line();
    }
    return documents;
  }

 private:
  // The character at `offset`; the end of the text reads as a line end.
  char at(std::size_t offset) const { return offset < text_.size() ? text_[offset] : '\n'; }

  bool is_blank_or_line_end(std::size_t offset) const {
    char c = at(offset);
    return c == ' ' || c == '\n';
  }

  Mark mark_at(std::size_t pos) const {
    return {line_ + 1, static_cast<int>(pos - line_start_) + 1};
  }

  void count_node() {
    if (++nodes_ > max_nodes_) unsupported();
  }

  void skip_spaces() {
    while (at(pos_) == ' ') ++pos_;
  }

  // Moves to the start of the next line (or the end of the text).
  void next_line() {
    const void* newline = std::memchr(text_.data() + pos_, '\n', text_.size() - pos_);
    if (newline == nullptr) {
      pos_ = line_start_ = text_.size();
      return;
    }
    pos_ = line_start_ =
        static_cast<std::size_t>(static_cast<const char*>(newline) - text_.data()) + 1;
    ++line_;
  }

  // From a line start, skips blank and comment lines to the first character
  // of the next content line, whose indentation it notes; false at the end.
  bool skip_to_content() {
    while (pos_ < text_.size()) {
      skip_spaces();
      char c = at(pos_);
      if (c != '\n' && c != '#') {
        indent_ = static_cast<int>(pos_ - line_start_);
        return true;
      }
      next_line();
    }
    return false;
  }

  // "---" or "..." at the start of a line, alone or before a space; what
  // only begins like one is left to yaml-cpp.
  bool at_marker(std::string_view marker) const {
    if (indent_ != 0 || text_.compare(pos_, 3, marker) != 0) return false;
    if (!is_blank_or_line_end(pos_ + 3)) unsupported();
    return true;
  }

  void consume_marker_line() {
    pos_ += 3;
    finish_line();
  }

  // After a node: blanks, then a comment or the line end.
  void finish_line() {
    std::size_t before = pos_;
    skip_spaces();
    char c = at(pos_);
    if (c != '\n' && !(c == '#' && pos_ > before)) unsupported();
    next_line();
  }

  bool at_sequence_entry() const { return at(pos_) == '-' && is_blank_or_line_end(pos_ + 1); }

  // yaml-cpp marks the end of a text that ends with a line break at the
  // start of the line after; at the end of a last line without one, its
  // mark follows no rule we know.
  Node null_at_end() {
    if (!text_.empty() && text_.back() != '\n') unsupported();
    count_node();
    Node null = Node::null("");
    null.mark = {line_ + 1, 1};
    return null;
  }

  Node null_at_next_token() {
    count_node();
    Node null = Node::null(std::string(null_word_at(text_.substr(pos_))));
    null.mark = mark_at(pos_);
    return null;
  }

  Node read_root() {
    if (indent_ != 0) unsupported();
    if (at_sequence_entry()) return read_sequence(0, false, 1);
    return read_map_or_unsupported(1);
  }

  // A block map whose first key starts at the cursor.
  Node read_map_or_unsupported(int depth) {
    Mark mark = mark_at(pos_);
    int indent = static_cast<int>(pos_ - line_start_);
    ScalarToken first = read_scalar(kKeyOnly);
    if (!first.is_key) unsupported();  // a scalar alone on its line
    return read_map(indent, key_text(first.node), mark, depth);
  }

  Node read_map(int indent, std::string key, Mark mark, int depth) {
    // Collections nested deeper than the budget's kMaxDepth go to yaml-cpp,
    // which refuses nesting past 500.
    if (static_cast<std::size_t>(depth) > kMaxDepth) unsupported();
    count_node();
    Node map = Node::map();
    map.mark = mark;
    while (true) {
      Node value = read_map_value(indent, depth);
      if (map.get(key)) unsupported();  // yaml-cpp reports it
      map.append(std::move(key), std::move(value));
      if (!collection_goes_on(indent)) break;
      ScalarToken next = read_scalar(kKeyOnly);
      if (!next.is_key) unsupported();
      key = key_text(next.node);
    }
    return map;
  }

  // Whether the collection at `indent` goes on at the next content line:
  // false at its end; what is indented deeper is left to yaml-cpp.
  bool collection_goes_on(int indent) {
    if (!skip_to_content() || at_marker("---") || at_marker("...") || indent_ < indent)
      return false;
    if (indent_ > indent) unsupported();
    return true;
  }

  // The value after a key's ": ": on the same line, or on the lines below,
  // where a sequence may start at the key's own indentation.
  Node read_map_value(int indent, int depth) {
    skip_spaces();
    char c = at(pos_);
    if (c == '\n' || c == '#') {
      next_line();
      return read_block_below(indent, true, depth);
    }
    return read_inline_value(indent, false, depth);
  }

  // The node on the lines after an empty "key:" or "-", which belongs to the
  // collection at `parent_indent`; null when nothing is indented deeper.
  Node read_block_below(int parent_indent, bool allow_indentless, int depth) {
    if (!skip_to_content()) return null_at_end();
    if (at_marker("---") || at_marker("...")) return null_at_next_token();
    bool entry = at_sequence_entry();
    if (indent_ > parent_indent) {
      return entry ? read_sequence(indent_, false, depth + 1) : read_map_or_unsupported(depth + 1);
    }
    if (entry && allow_indentless && indent_ == parent_indent)
      return read_sequence(indent_, true, depth + 1);
    return null_at_next_token();
  }

  // A block sequence whose first "-" is at the cursor. An indentless one
  // (under a key, at the key's indentation) ends where the next key is.
  Node read_sequence(int indent, bool indentless, int depth) {
    if (static_cast<std::size_t>(depth) > kMaxDepth) unsupported();
    count_node();
    Node sequence = Node::sequence();
    sequence.mark = mark_at(pos_);
    while (true) {
      ++pos_;  // the "-"
      skip_spaces();
      char c = at(pos_);
      if (c == '\n' || c == '#') {
        next_line();
        sequence.push_back(read_block_below(indent, false, depth));
      } else if (at_sequence_entry()) {
        unsupported();  // "- - x"
      } else {
        sequence.push_back(read_inline_value(indent, true, depth));
      }
      if (!collection_goes_on(indent)) break;
      if (!at_sequence_entry()) {
        if (indentless) break;
        unsupported();
      }
    }
    return sequence;
  }

  // A value that starts on the current line, in the collection at
  // `parent_indent`; a sequence entry may hold a map ("- key: value").
  Node read_inline_value(int parent_indent, bool map_allowed, int depth) {
    switch (at(pos_)) {
      case '|':
      case '>':
        return read_block_scalar(parent_indent);
      case '{':
        return read_empty_flow('}', Node::map());
      case '[':
        return read_empty_flow(']', Node::sequence());
      default:
        break;
    }
    Mark mark = mark_at(pos_);
    int indent = static_cast<int>(pos_ - line_start_);
    ScalarToken scalar = read_scalar(parent_indent);
    if (scalar.is_key) {
      if (!map_allowed) unsupported();  // "key: a: b"
      return read_map(indent, key_text(scalar.node), mark, depth + 1);
    }
    finish_line();
    return std::move(scalar.node);
  }

  // "{}" or "[]"; any other flow collection is left to yaml-cpp.
  Node read_empty_flow(char close, Node empty) {
    count_node();
    empty.mark = mark_at(pos_);
    ++pos_;
    skip_spaces();
    if (at(pos_) != close) unsupported();
    ++pos_;
    finish_line();
    return empty;
  }

  // yaml-cpp's key for a scalar: its text, "null" for a null.
  static std::string key_text(const Node& key) {
    if (key.is_null()) return "null";
    // The merge key "<<" needs aliases or flow maps to mean anything.
    if (key.style() == Style::Plain && key.text() == "<<") unsupported();
    return key.text();
  }

  // A plain or quoted scalar, and whether it is a key: then the cursor is
  // past its ":"; else right after the scalar. One that is not a key may go
  // on over the lines indented deeper than `parent_indent`.
  ScalarToken read_scalar(int parent_indent) {
    std::size_t start = pos_;
    int first_line = line_;
    Mark mark = mark_at(start);
    ScalarToken scalar;
    char c = at(pos_);
    if (c == '"' || c == '\'') {
      std::string text = read_quoted(c, parent_indent);
      scalar.node = Node::scalar(std::move(text), Tag::String,
                                 c == '"' ? Style::DoubleQuoted : Style::SingleQuoted);
      std::size_t end = pos_;
      skip_spaces();
      if (at(pos_) == ':' && is_blank_or_line_end(pos_ + 1)) {
        scalar.is_key = true;
        ++pos_;
      } else {
        pos_ = end;
      }
    } else {
      std::string text = read_plain(parent_indent, scalar.is_key);
      std::optional<Tag> tag = resolve_plain(text);
      scalar.node =
          tag ? Node::scalar(std::move(text), *tag, Style::Plain) : Node::null(std::move(text));
    }
    if (scalar.is_key && (line_ != first_line || pos_ - start > kMaxKeyLength)) unsupported();
    count_node();
    scalar.node.mark = mark;
    return scalar;
  }

  // Plain text starts with no indicator, save "-" before a non-blank ("-1").
  bool starts_plain() const {
    char first = at(pos_);
    return std::strchr("-?:,[]{}#&*!|>'\"%@`", first) == nullptr ||
           (first == '-' && !is_blank_or_line_end(pos_ + 1));
  }

  enum class PlainEnd { LineEnd, Key, Comment };

  // Plain text on one line from the cursor, which stops at ": ", " #" or the
  // line end; `end` is set past its last non-blank character.
  PlainEnd scan_plain_line(std::size_t& end) {
    end = pos_;
    while (true) {
      char c = at(pos_);
      if (c == '\n') return PlainEnd::LineEnd;
      if (c == ':' && is_blank_or_line_end(pos_ + 1)) return PlainEnd::Key;
      if (c == ' ') {
        if (at(pos_ + 1) == '#') return PlainEnd::Comment;
      } else {
        end = pos_ + 1;
      }
      ++pos_;
    }
  }

  // A plain scalar. Continuation lines holding what might end or comment it
  // are left to yaml-cpp.
  std::string read_plain(int parent_indent, bool& is_key) {
    if (!starts_plain()) unsupported();
    std::size_t start = pos_, end = 0;
    PlainEnd stop = scan_plain_line(end);
    std::string text(text_.substr(start, end - start));
    if (stop == PlainEnd::Key) {
      is_key = true;
      ++pos_;
    }
    while (stop == PlainEnd::LineEnd && continues_below(parent_indent, text)) {
      if (at(pos_) == '#') unsupported();
      start = pos_;
      stop = scan_plain_line(end);
      if (stop != PlainEnd::LineEnd) unsupported();
      text += text_.substr(start, end - start);
    }
    return text;
  }

  // At a line end inside a flow scalar (plain or quoted): whether its next
  // line that is not blank is indented deeper than `parent_indent`; if so,
  // moves there and folds the line break into `text`: a space, or one line
  // break per empty line between.
  bool continues_below(int parent_indent, std::string& text) {
    if (pos_ >= text_.size()) return false;
    std::size_t line = pos_ + 1, empty_lines = 0, indent = 0;
    while (true) {
      indent = 0;
      while (at(line + indent) == ' ') ++indent;
      if (line + indent >= text_.size()) return false;
      if (at(line + indent) != '\n') break;
      line += indent + 1;
      ++empty_lines;
    }
    if (static_cast<int>(indent) <= parent_indent) return false;
    line_ += static_cast<int>(empty_lines) + 1;
    line_start_ = line;
    pos_ = line + indent;
    if (empty_lines == 0) {
      text += ' ';
    } else {
      text.append(empty_lines, '\n');
    }
    return true;
  }

  // A single- or double-quoted scalar, over lines indented deeper than
  // `parent_indent`: blanks around a line break go, the break is folded.
  std::string read_quoted(char quote, int parent_indent) {
    std::string text;
    std::size_t content_end = 0;  // where the blanks that a line break drops start
    ++pos_;
    while (true) {
      char c = at(pos_);
      if (c == '\n') {
        text.resize(content_end);
        if (!continues_below(parent_indent, text)) unsupported();  // never closed
        content_end = text.size();
        continue;
      }
      bool blank = c == ' ';
      if (c == quote) {
        if (quote == '"' || at(pos_ + 1) != '\'') break;
        ++pos_;  // '' is a quote
      } else if (c == '\\' && quote == '"') {
        c = escaped(at(++pos_));
        blank = false;  // "\ " is a space that stays
      }
      text += c;
      if (!blank) content_end = text.size();
      ++pos_;
    }
    ++pos_;
    return text;
  }

  // The one-character escapes; \x, \u, \U, \N, \_, \L, \P, \<TAB> and escaped
  // line breaks are left to yaml-cpp.
  static char escaped(char c) {
    switch (c) {
      case '\\':
      case '"':
      case '/':
      case ' ':
        return c;
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case '0':
        return '\0';
      case 'a':
        return '\a';
      case 'b':
        return '\b';
      case 'e':
        return '\x1b';
      case 'f':
        return '\f';
      case 'v':
        return '\v';
      default:
        unsupported();
    }
  }

  // "|" or ">" with an optional chomping indicator, its content indented
  // deeper than `parent_indent` by the first line. Leading empty lines, an
  // explicit indentation, a folded "keep" (yaml-cpp keeps one line break
  // there), folded lines indented deeper, a comment ending the scalar and
  // the end of the text inside it are left to yaml-cpp.
  Node read_block_scalar(int parent_indent) {
    count_node();
    Mark mark = mark_at(pos_);
    bool folded = at(pos_) == '>';
    char chomping = at(++pos_);
    if (chomping == '-' || chomping == '+') ++pos_;
    if (folded && chomping == '+') unsupported();
    finish_line();
    std::size_t content_indent = 0;
    while (at(pos_ + content_indent) == ' ') ++content_indent;
    if (at(pos_ + content_indent) == '\n' || static_cast<int>(content_indent) <= parent_indent)
      unsupported();
    std::string text;
    std::size_t breaks = 0;  // line breaks since the last content line
    while (pos_ < text_.size()) {
      std::size_t spaces = 0;
      while (at(pos_ + spaces) == ' ') ++spaces;
      char c = at(pos_ + spaces);
      if (spaces < content_indent && c != '\n') {
        if (c == '#') unsupported();
        break;
      }
      const void* newline = std::memchr(text_.data() + pos_, '\n', text_.size() - pos_);
      if (newline == nullptr) unsupported();
      std::size_t line_end =
          static_cast<std::size_t>(static_cast<const char*>(newline) - text_.data());
      if (c == '\n' && spaces <= content_indent) {
        ++breaks;
      } else {
        std::string_view line =
            text_.substr(pos_ + content_indent, line_end - pos_ - content_indent);
        if (!folded) {
          text.append(breaks, '\n');
        } else if (line.front() == ' ') {
          unsupported();
        } else if (breaks == 1) {
          text += ' ';
        } else if (breaks > 1) {
          text.append(breaks - 1, '\n');
        }
        text += line;
        breaks = 1;
      }
      pos_ = line_start_ = line_end + 1;
      ++line_;
    }
    if (chomping == '+') {
      text.append(breaks, '\n');
    } else if (chomping != '-') {
      text += '\n';
    }
    Node scalar =
        Node::scalar(std::move(text), Tag::String, folded ? Style::Folded : Style::Literal);
    scalar.mark = mark;
    return scalar;
  }

  std::string_view text_;
  std::size_t max_nodes_;
  std::size_t nodes_ = 0;
  std::size_t pos_ = 0;         // the cursor
  std::size_t line_start_ = 0;  // where the cursor's line starts
  int line_ = 0;                // the cursor's line, from 0
  int indent_ = 0;              // the current content line's indentation
};

}  // namespace

std::optional<std::vector<Node>> read_block_documents(std::string_view text,
                                                      std::size_t max_nodes) {
  if (!has_only_plain_white_space(text)) return std::nullopt;
  try {
    return BlockReader(text, max_nodes).documents();
  } catch (const Unsupported&) {
    return std::nullopt;
  }
}

}  // namespace fluxop::yaml
