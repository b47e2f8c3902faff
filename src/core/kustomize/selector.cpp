#include "core/kustomize/selector.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <utility>

#include "core/error.h"

namespace fluxop::kustomize {

namespace {

using Operator = Requirement::Operator;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool is_symbol(char c) { return std::string_view("=!(),<>").find(c) != std::string_view::npos; }
bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A word (key, value, `in`, `notin`) or a symbol (`=`, `==`, `!=`, `!`, `(`,
// `)`, `,`, `<`, `>`); an empty word ends the input.
struct Token {
  bool symbol = false;
  std::string text;
};

std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (true) {
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size()) break;
    std::size_t start = i;
    if (is_symbol(text[i])) {
      bool pair = (text[i] == '=' || text[i] == '!') && i + 1 < text.size() && text[i + 1] == '=';
      i += pair ? 2 : 1;
      tokens.push_back({true, std::string(text.substr(start, i - start))});
    } else {
      while (i < text.size() && !is_space(text[i]) && !is_symbol(text[i])) ++i;
      tokens.push_back({false, std::string(text.substr(start, i - start))});
    }
  }
  tokens.push_back({false, ""});
  return tokens;
}

// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, at most 63 characters.
bool is_label_name(std::string_view s) {
  return !s.empty() && s.size() <= 63 && is_alnum(s.front()) && is_alnum(s.back()) &&
         std::all_of(s.begin(), s.end(),
                     [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// A DNS-1123 subdomain: dot-separated lowercase labels, at most 253 characters.
bool is_dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = std::min(s.find('.', start), s.size());
    std::string_view label = s.substr(start, dot - start);
    auto lower = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (label.empty() || !lower(label.front()) || !lower(label.back()) ||
        !std::all_of(label.begin(), label.end(), [&](char c) { return lower(c) || c == '-'; })) {
      return false;
    }
    if (dot == s.size()) return true;
    start = dot + 1;
  }
}

bool is_qualified_name(std::string_view key) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos) return is_label_name(key);
  return is_dns_subdomain(key.substr(0, slash)) && is_label_name(key.substr(slash + 1));
}

// Go's strconv.ParseInt(s, 10, 64).
std::optional<std::int64_t> parse_int64(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text), tokens_(tokenize(text)) {}

  LabelSelector parse() {
    LabelSelector selector;
    if (at_end()) return selector;
    while (true) {
      selector.push_back(requirement());
      if (at_end()) return selector;
      if (!at(",")) fail("found " + quote(peek().text) + ", expected \",\" or the end");
      next();
      if (at_end() || (peek().symbol && !at("!"))) {
        fail("found " + describe(peek()) + ", expected a key after \",\"");
      }
    }
  }

 private:
  const Token& peek() const { return tokens_[pos_]; }
  const Token& next() {
    const Token& token = tokens_[pos_];
    if (!at_end()) ++pos_;
    return token;
  }
  bool at_end() const { return pos_ == tokens_.size() - 1; }
  bool at(std::string_view symbol) const { return peek().symbol && peek().text == symbol; }

  static std::string describe(const Token& token) {
    return token.text.empty() ? "the end" : quote(token.text);
  }

  [[noreturn]] void fail(std::string_view message) const {
    throw Error("invalid selector " + quote(text_) + ": " + std::string(message));
  }

  Requirement requirement() {
    Requirement result;
    bool negated = at("!");
    if (negated) next();
    const Token& key = next();
    if (key.symbol || key.text.empty()) fail("found " + describe(key) + ", expected a key");
    if (!is_qualified_name(key.text)) {
      fail("invalid label key " + quote(key.text) +
           ": must be a name of alphanumerics, '-', '_' or '.' (at most 63, alphanumeric at "
           "both ends), optionally prefixed by a DNS subdomain and '/'");
    }
    result.key = key.text;
    if (negated || at_end() || at(",")) {
      result.op = negated ? Operator::DoesNotExist : Operator::Exists;
      return result;
    }
    result.op = operator_of(next());
    result.values = (result.op == Operator::In || result.op == Operator::NotIn)
                        ? value_list()
                        : std::vector<std::string>{exact_value()};
    check_values(result);
    return result;
  }

  Operator operator_of(const Token& token) const {
    static const std::pair<std::string_view, Operator> operators[] = {
        {"=", Operator::Equals},      {"==", Operator::Equals},  {"!=", Operator::NotEquals},
        {">", Operator::GreaterThan}, {"<", Operator::LessThan},
    };
    for (const auto& [text, op] : operators) {
      if (token.symbol && token.text == text) return op;
    }
    if (!token.symbol && token.text == "in") return Operator::In;
    if (!token.symbol && token.text == "notin") return Operator::NotIn;
    fail("found " + describe(token) + ", expected =, ==, !=, in, notin, > or <");
  }

  // The value of `k=v`; `k=` (followed by "," or the end) means the empty value.
  std::string exact_value() {
    if (at_end() || at(",")) return "";
    const Token& value = next();
    if (value.symbol) fail("found " + describe(value) + ", expected a value");
    return value.text;
  }

  // "(a,b)"; empty items are empty values, so "()" is {""}.
  std::vector<std::string> value_list() {
    if (!at("(")) fail("found " + describe(peek()) + ", expected \"(\"");
    next();
    std::vector<std::string> values;
    while (true) {
      values.push_back(!peek().symbol && !at_end() ? next().text : "");
      if (at(")")) {
        next();
        return values;
      }
      if (!at(",")) fail("found " + describe(peek()) + ", expected \",\" or \")\"");
      next();
    }
  }

  void check_values(const Requirement& requirement) const {
    for (const std::string& value : requirement.values) {
      if (!value.empty() && !is_label_name(value)) {
        fail("invalid value " + quote(value) + " for " + quote(requirement.key) +
             ": must be alphanumerics, '-', '_' or '.' (at most 63, alphanumeric at both ends)");
      }
      bool ordered =
          requirement.op == Operator::GreaterThan || requirement.op == Operator::LessThan;
      if (ordered && !parse_int64(value)) {
        fail("the value of " + quote(requirement.key) + " for > and < must be an integer");
      }
    }
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
};

bool holds(const Requirement& requirement, const yaml::Node& labels) {
  const yaml::Node* found = labels.is_map() ? labels.get(requirement.key) : nullptr;
  std::string value = found && found->is_scalar() ? found->text() : "";
  auto listed = [&] {
    return std::find(requirement.values.begin(), requirement.values.end(), value) !=
           requirement.values.end();
  };
  switch (requirement.op) {
    case Operator::Equals:
    case Operator::In:
      return found && listed();
    case Operator::NotEquals:
    case Operator::NotIn:
      return !found || !listed();
    case Operator::Exists:
      return found != nullptr;
    case Operator::DoesNotExist:
      return found == nullptr;
    case Operator::GreaterThan:
    case Operator::LessThan: {
      auto actual = found ? parse_int64(value) : std::nullopt;
      auto bound = parse_int64(requirement.values.front());
      if (!actual || !bound) return false;
      return requirement.op == Operator::GreaterThan ? *actual > *bound : *actual < *bound;
    }
  }
  return false;
}

}  // namespace

LabelSelector parse_label_selector(std::string_view text) { return Parser(text).parse(); }

bool matches(const LabelSelector& selector, const yaml::Node& labels) {
  return std::all_of(selector.begin(), selector.end(),
                     [&](const Requirement& requirement) { return holds(requirement, labels); });
}

}  // namespace fluxop::kustomize
