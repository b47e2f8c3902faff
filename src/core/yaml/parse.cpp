#include "core/yaml/parse.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/file.h"
#include "core/utf8.h"
#include "core/yaml/block_reader.h"
#include "core/yaml/budget.h"
#include "core/yaml/scalar.h"

namespace fluxop::yaml {

namespace {

constexpr std::string_view kYamlTagPrefix = "tag:yaml.org,2002:";

// The nodes of one stream, aliases expanded, are at most kMaxNodes (budget.h),
// "billion laughs" included. Go's yaml.v3 refuses "excessive aliasing" only
// past 400,000 nodes, at a share of aliases that takes more than a million.
// Nesting is bounded by yaml-cpp (DeepRecursion).

[[noreturn]] void fail_at(std::string_view source, const YAML::Mark& mark, std::string_view what) {
  throw Error(std::string(source) + ":" + std::to_string(mark.line + 1) + ":" +
              std::to_string(mark.column + 1) + ": " + std::string(what));
}

// yaml-cpp does not report scalar styles; the first character at the
// scalar's position tells them.
Style style_at(std::string_view text, const YAML::Mark& mark) {
  if (mark.pos < 0 || static_cast<std::size_t>(mark.pos) >= text.size()) return Style::Plain;
  switch (text[static_cast<std::size_t>(mark.pos)]) {
    case '\'':
      return Style::SingleQuoted;
    case '"':
      return Style::DoubleQuoted;
    case '|':
      return Style::Literal;
    case '>':
      return Style::Folded;
    default:
      return Style::Plain;
  }
}

// How a null was written, read from its position: "null", "~" or "".
std::string null_text_at(std::string_view text, const YAML::Mark& mark) {
  if (mark.pos < 0 || static_cast<std::size_t>(mark.pos) >= text.size()) return {};
  return std::string(null_word_at(text.substr(static_cast<std::size_t>(mark.pos))));
}

// yaml-cpp 0.7 decodes the escapes \N and \_ to the bare bytes 0x85 and
// 0xA0; the input being valid UTF-8, only those can be invalid here.
std::string repair_escapes(const std::string& value) {
  if (!first_invalid_utf8(value)) return value;
  std::string out;
  for (std::size_t i = 0; i < value.size();) {
    char32_t ignored;
    std::size_t w = decode_utf8(value, i, ignored);
    if (w == 0) {
      out += '\xC2';
      w = 1;
    }
    out.append(value, i, w);
    i += w;
  }
  return out;
}

std::optional<Tag> explicit_tag(std::string_view tag) {
  if (tag.substr(0, kYamlTagPrefix.size()) != kYamlTagPrefix) return Tag::String;
  std::string_view name = tag.substr(kYamlTagPrefix.size());
  if (name == "int") return Tag::Int;
  if (name == "float") return Tag::Float;
  if (name == "bool") return Tag::Bool;
  if (name == "timestamp") return Tag::Timestamp;
  if (name == "null") return std::nullopt;
  return Tag::String;
}

// Builds Nodes from yaml-cpp's parse events, one document at a time.
class Builder : public YAML::EventHandler {
 public:
  Builder(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  Node take_document() {
    Node doc = std::move(root_);
    root_ = Node();
    anchors_.clear();
    // yaml-cpp 0.7 reports a token it cannot place (e.g. a "," in block
    // context) as an empty document without consuming it, forever.
    if (doc.is_null() && doc.mark.line > 0 && last_null_document_ &&
        last_null_document_->line == doc.mark.line &&
        last_null_document_->column == doc.mark.column) {
      YAML::Mark mark;
      mark.line = doc.mark.line - 1;
      mark.column = doc.mark.column - 1;
      fail_at(source_, mark, "did not find expected node content");
    }
    last_null_document_ = doc.is_null() ? std::optional(doc.mark) : std::nullopt;
    return doc;
  }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Node n = Node::null(null_text_at(text_, mark));
    n.mark = to_mark(mark);
    count(1, mark);
    add(std::move(n), anchor, mark, 1);
  }

  // The anchored node is copied: counted first, so that an expansion too
  // large is refused before it is made.
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) fail_at(source_, mark, "unknown anchor");
    const auto& [node, size] = it->second;
    count(size, mark);
    add(node, YAML::NullAnchor, mark, 0);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    std::optional<Tag> resolved;
    if (tag == "?") {
      resolved = resolve_plain(value);
    } else if (tag == "!") {
      resolved = Tag::String;
    } else {
      resolved = explicit_tag(tag);
    }
    Style style = style_at(text_, mark);
    if (style == Style::DoubleQuoted || style == Style::SingleQuoted) check_closed(mark, style);
    Node n = resolved ? Node::scalar(repair_escapes(value), *resolved, style) : Node();
    n.mark = to_mark(mark);
    count(1, mark);
    add(std::move(n), anchor, mark, 1);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(Node::sequence(), anchor, mark);
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(Node::map(), anchor, mark);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    Node node;
    YAML::anchor_t anchor;
    YAML::Mark mark;
    std::size_t counted_at_open;
    std::optional<std::string> pending_key;  // maps: a key waiting for its value
    bool pending_merge = false;              // the pending key is the merge key "<<"
    std::vector<Node> merges;                // maps: what "<<" merges in, first wins
  };

  static Mark to_mark(const YAML::Mark& m) { return {m.line + 1, m.column + 1}; }

  void open(Node node, YAML::anchor_t anchor, const YAML::Mark& mark) {
    node.mark = to_mark(mark);
    std::size_t at_open = counted_;
    count(1, mark);
    stack_.push_back({std::move(node), anchor, mark, at_open, std::nullopt, false, {}});
  }

  void close() {
    Open top = std::move(stack_.back());
    stack_.pop_back();
    apply_merges(top);
    add(std::move(top.node), top.anchor, top.mark, counted_ - top.counted_at_open);
  }

  void count(std::size_t nodes, const YAML::Mark& mark) {
    counted_ += nodes;
    if (counted_ > kMaxNodes)
      fail_at(source_, mark,
              "more than " + std::to_string(kMaxNodes) + " nodes (aliases expanded)");
  }

  // yaml-cpp 0.7 ends a quoted scalar that is never closed at the end of the
  // stream, silently; Go's yaml.v3 refuses it.
  void check_closed(const YAML::Mark& mark, Style style) const {
    char quote = style == Style::DoubleQuoted ? '"' : '\'';
    for (std::size_t i = static_cast<std::size_t>(mark.pos) + 1; i < text_.size(); ++i) {
      if (quote == '"' && text_[i] == '\\') {
        ++i;
      } else if (text_[i] == quote) {
        if (quote == '"' || i + 1 >= text_.size() || text_[i + 1] != '\'') return;
        ++i;  // '' is a quote inside single quotes
      }
    }
    fail_at(source_, mark, "found unexpected end of stream while scanning a quoted scalar");
  }

  // The merge key: the map's own keys win over merged ones, and an earlier
  // merged map over a later one.
  static void apply_merges(Open& map) {
    for (Node& source : map.merges) {
      for (auto& [key, value] : source.entries()) {
        if (!map.node.get(key)) map.node.append(key, std::move(value));
      }
    }
  }

  void add_merge(Open& map, Node value, const YAML::Mark& mark) {
    if (value.is_map()) return map.merges.push_back(std::move(value));
    bool all_maps =
        value.is_sequence() && std::all_of(value.items().begin(), value.items().end(),
                                           [](const Node& item) { return item.is_map(); });
    if (!all_maps)
      fail_at(source_, mark, "map merge requires map or sequence of maps as the value");
    for (Node& item : value.items()) map.merges.push_back(std::move(item));
  }

  // `size`: the nodes of `node`, for an alias of it to count.
  void add(Node node, YAML::anchor_t anchor, const YAML::Mark& mark, std::size_t size) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = {node, size};
    if (stack_.empty()) {
      root_ = std::move(node);
      return;
    }
    Open& parent = stack_.back();
    if (parent.node.is_sequence()) {
      parent.node.push_back(std::move(node));
    } else if (!parent.pending_key) {
      parent.pending_key = key_text(node, mark);
      parent.pending_merge =
          node.is_string() && node.style() == Style::Plain && node.text() == "<<";
    } else if (parent.pending_merge) {
      parent.pending_key.reset();
      parent.pending_merge = false;
      add_merge(parent, std::move(node), mark);
    } else {
      if (parent.node.get(*parent.pending_key)) {
        fail_at(source_, mark, "mapping key " + quote(*parent.pending_key) + " already defined");
      }
      parent.node.append(std::move(*parent.pending_key), std::move(node));
      parent.pending_key.reset();
    }
  }

  std::string key_text(const Node& key, const YAML::Mark& mark) const {
    if (key.is_null()) return "null";
    if (!key.is_scalar()) fail_at(source_, mark, "mapping keys must be scalars");
    return key.text();
  }

  std::string_view text_;
  std::string_view source_;
  std::vector<Open> stack_;
  std::map<YAML::anchor_t, std::pair<Node, std::size_t>> anchors_;  // node, size
  std::size_t counted_ = 0;  // nodes built in the stream, aliases expanded
  Node root_;
  std::optional<Mark> last_null_document_;
};

// YAML text is UTF-8 without control characters (yaml.v3's reader check);
// refusing them here also keeps yaml-cpp away from input it loops on.
bool is_yaml_printable(char32_t c) {
  return c == 0x09 || c == 0x0A || c == 0x0D || (c >= 0x20 && c <= 0x7E) || c == 0x85 ||
         (c >= 0xA0 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) || c >= 0x10000;
}

void check_characters(std::string_view text, std::string_view source) {
  YAML::Mark mark;
  mark.line = mark.column = 0;
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    std::size_t w = decode_utf8(text, i, c);
    if (w == 0) fail_at(source, mark, "invalid UTF-8");
    if (!is_yaml_printable(c)) fail_at(source, mark, "control characters are not allowed");
    if (c == '\n') {
      ++mark.line;
      mark.column = 0;
    } else {
      ++mark.column;
    }
    i += w;
  }
}

std::vector<Node> parse_with_yaml_cpp(std::string_view text, std::string_view source) {
  std::istringstream stream{std::string(text)};
  std::vector<Node> docs;
  try {
    YAML::Parser parser(stream);
    Builder builder(text, source);
    while (parser.HandleNextDocument(builder)) docs.push_back(builder.take_document());
  } catch (const YAML::DeepRecursion& e) {
    fail_at(source, e.mark, "nested too deeply");
  } catch (const YAML::Exception& e) {
    fail_at(source, e.mark, e.msg);
  }
  return docs;
}

}  // namespace

std::vector<Node> parse_documents(std::string_view text, std::string_view source) {
  check_characters(text, source);
  if (auto documents = read_block_documents(text, kMaxNodes)) return std::move(*documents);
  return parse_with_yaml_cpp(text, source);
}

std::vector<Node> parse_documents_with_yaml_cpp(std::string_view text, std::string_view source) {
  check_characters(text, source);
  return parse_with_yaml_cpp(text, source);
}

Node parse_document(std::string_view text, std::string_view source) {
  auto docs = parse_documents(text, source);
  if (docs.size() > 1)
    throw Error(std::string(source) + ": expected one YAML document, found " +
                std::to_string(docs.size()));
  return docs.empty() ? Node() : std::move(docs.front());
}

std::string read_file(const std::string& path) { return read_input_file(path); }

}  // namespace fluxop::yaml
