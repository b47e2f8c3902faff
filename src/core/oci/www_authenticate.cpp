#include "core/oci/www_authenticate.h"

#include <cctype>

#include "core/ascii.h"
#include "core/net/text.h"

namespace fluxop::oci {

namespace {

bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// A cursor over the header.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  bool done() {
    skip_space();
    return pos_ >= text_.size();
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::string_view token() {
    skip_space();
    std::size_t start = pos_;
    while (pos_ < text_.size() && is_token_char(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  // A quoted-string (backslash escapes any character), or a bare value up
  // to the next ',' or space (more lenient than a token: some registries
  // send unquoted URLs).
  bool value(std::string& out) {
    skip_space();
    if (pos_ >= text_.size() || text_[pos_] != '"') {
      std::size_t start = pos_;
      while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != ' ' && text_[pos_] != '\t')
        ++pos_;
      out = text_.substr(start, pos_ - start);
      return !out.empty();
    }
    out.clear();
    for (++pos_; pos_ < text_.size(); ++pos_) {
      char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c == '\\' && pos_ + 1 < text_.size()) c = text_[++pos_];
      out += c;
    }
    return false;  // unterminated
  }
  // Whether a `name=` parameter (not `name==`, a token68 tail) starts here.
  bool at_param() {
    std::size_t saved = pos_;
    bool is_param = !token().empty() && accept('=') && !accept('=');
    pos_ = saved;
    return is_param;
  }
  // Skips a token68 credential (e.g. a base64 blob) after the scheme.
  void skip_token68() {
    skip_space();
    while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != ' ') ++pos_;
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::vector<Challenge> parse_www_authenticate(std::string_view header) {
  std::vector<Challenge> challenges;
  Scanner in(header);
  while (!in.done()) {
    if (in.accept(',')) continue;
    std::string_view scheme = in.token();
    if (scheme.empty()) break;
    Challenge challenge{lowercase(scheme), {}};
    if (!in.done() && !in.at_param() && !in.accept(',')) in.skip_token68();
    // Parameters until the next scheme: a token not followed by '='.
    while (in.at_param()) {
      std::string name = lowercase(in.token());
      in.accept('=');
      std::string value;
      if (!in.value(value)) {
        challenges.push_back(std::move(challenge));
        return challenges;
      }
      challenge.params[name] = value;
      if (!in.accept(',')) break;
    }
    challenges.push_back(std::move(challenge));
  }
  return challenges;
}

}  // namespace fluxop::oci
