#include "core/yaml/parse_cache.h"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "core/digest.h"
#include "core/error.h"
#include "core/file.h"
#include "core/yaml/parse.h"

namespace fluxop::yaml {

namespace fs = std::filesystem;

namespace {

// Bumped whenever the encoding or what the parser produces changes.
constexpr std::string_view kMagic = "fluxopctl-parsed-yaml 3\n";
// An entry: the magic, the digest of the text it was parsed from, the seal
// (core/cache_seal.h) of that digest and the documents, then the documents.
// Both are checked before an entry is used: the name alone ties it to
// nothing, and a changed byte inside (a disk error, a hand edit, an entry
// planted by whoever can write the cache, which can compute any digest but
// not the seal) would otherwise come back as objects the source never had.
constexpr std::string_view kSourceField = "source ";
constexpr std::string_view kSealField = "seal ";

std::string sealed_part(std::string_view source_digest, std::string_view documents) {
  std::string out(source_digest);
  out += '\n';
  return out.append(documents);
}

void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void put_text(std::string& out, std::string_view text) {
  put_varint(out, text.size());
  out.append(text);
}

void put_node(std::string& out, const Node& node) {
  out += static_cast<char>(node.kind());
  put_varint(out, static_cast<std::uint64_t>(node.mark.line));
  put_varint(out, static_cast<std::uint64_t>(node.mark.column));
  switch (node.kind()) {
    case Node::Kind::Null:
      return put_text(out, node.null_form());
    case Node::Kind::Scalar:
      out += static_cast<char>(node.tag());
      out += static_cast<char>(node.style());
      return put_text(out, node.text());
    case Node::Kind::Sequence:
      put_varint(out, node.size());
      for (const Node& item : node.items()) put_node(out, item);
      return;
    case Node::Kind::Map:
      put_varint(out, node.size());
      for (const auto& [key, value] : node.entries()) {
        put_text(out, key);
        put_node(out, value);
      }
      return;
  }
}

// The fewest bytes an encoded node takes: its kind, line, column and one
// varint. Bounding a count by what is left bounds what it reserves too.
constexpr std::size_t kMinimumNodeSize = 4;

// Reads the encoding back; every read is bounds-checked, so a damaged entry
// fails instead of reading past the end.
class Decoder {
 public:
  explicit Decoder(std::string_view data) : data_(data) {}

  bool at_end() const { return pos_ == data_.size(); }

  std::optional<std::uint64_t> varint() {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64 && pos_ < data_.size(); shift += 7) {
      auto byte = static_cast<unsigned char>(data_[pos_++]);
      value |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return std::nullopt;
  }

  std::optional<std::string> text() {
    auto size = varint();
    if (!size || *size > data_.size() - pos_) return std::nullopt;
    std::string out(data_.substr(pos_, *size));
    pos_ += *size;
    return out;
  }

  std::optional<int> byte(int limit) {
    if (pos_ >= data_.size()) return std::nullopt;
    int value = static_cast<unsigned char>(data_[pos_++]);
    return value <= limit ? std::optional(value) : std::nullopt;
  }

  // Decodes one node into `out`, in place: a map of many entries moves
  // nothing once decoded. False when the data is damaged.
  bool node(Node& out, int depth = 0) {
    auto kind = byte(static_cast<int>(Node::Kind::Map));
    auto line = varint();
    auto column = varint();
    if (!kind || !line || !column || depth > 10000) return false;
    if (!body(out, static_cast<Node::Kind>(*kind), depth)) return false;
    out.mark = {static_cast<int>(*line), static_cast<int>(*column)};
    return true;
  }

 private:
  bool body(Node& out, Node::Kind kind, int depth) {
    switch (kind) {
      case Node::Kind::Null: {
        auto written = text();
        if (!written) return false;
        out = Node::null(std::move(*written));
        return true;
      }
      case Node::Kind::Scalar: {
        auto tag = byte(static_cast<int>(Tag::Timestamp));
        auto style = byte(static_cast<int>(Style::Folded));
        auto value = text();
        if (!tag || !style || !value) return false;
        out = Node::scalar(std::move(*value), static_cast<Tag>(*tag), static_cast<Style>(*style));
        return true;
      }
      case Node::Kind::Sequence:
        out = Node::sequence();
        return collection(out, depth);
      case Node::Kind::Map:
        out = Node::map();
        return collection(out, depth);
    }
    return false;
  }

  bool collection(Node& out, int depth) {
    auto count = varint();
    if (!count || *count > (data_.size() - pos_) / kMinimumNodeSize) return false;
    if (out.is_map()) {
      out.entries().reserve(*count);
    } else {
      out.items().reserve(*count);
    }
    for (std::uint64_t i = 0; i < *count; ++i) {
      Node* child;
      if (out.is_map()) {
        auto key = text();
        if (!key) return false;
        child = &out.append(std::move(*key), Node());
      } else {
        child = &out.items().emplace_back();
      }
      if (!node(*child, depth + 1)) return false;
    }
    return true;
  }

  std::string_view data_;
  std::size_t pos_ = 0;
};

// Written next to its final name and renamed, so readers never see half an
// entry and concurrent runs at worst write the same bytes twice. A cache
// that cannot be written is only slower.
void write_entry(const fs::path& path, const std::string& data) {
  try {
    write_file_atomically(path.string(), data);
  } catch (const Error&) {
  }
}

}  // namespace

std::string encode_documents(const std::vector<Node>& documents) {
  std::string out;
  put_varint(out, documents.size());
  for (const Node& doc : documents) put_node(out, doc);
  return out;
}

std::optional<std::vector<Node>> decode_documents(std::string_view data) {
  Decoder decoder(data);
  auto count = decoder.varint();
  if (!count || *count > data.size() / kMinimumNodeSize) return std::nullopt;
  std::vector<Node> documents(*count);
  for (Node& doc : documents) {
    if (!decoder.node(doc)) return std::nullopt;
  }
  if (!decoder.at_end()) return std::nullopt;
  return documents;
}

std::string encode_entry(std::string_view source_digest, const std::vector<Node>& documents,
                         const CacheSeal& seal) {
  std::string documents_data = encode_documents(documents);
  std::string out(kMagic);
  out.append(kSourceField).append(source_digest) += '\n';
  out.append(kSealField).append(seal.seal(sealed_part(source_digest, documents_data))) += '\n';
  return out + documents_data;
}

std::optional<std::vector<Node>> decode_entry(std::string_view data, std::string_view source_digest,
                                              const CacheSeal& seal) {
  // One header line: `field`, then a digest.
  auto line = [&data](std::string_view field) -> std::optional<std::string_view> {
    std::size_t end = data.find('\n');
    if (end == std::string_view::npos || !data.starts_with(field)) return std::nullopt;
    std::string_view value = data.substr(field.size(), end - field.size());
    data.remove_prefix(end + 1);
    return value;
  };
  if (!data.starts_with(kMagic)) return std::nullopt;
  data.remove_prefix(kMagic.size());
  std::optional<std::string_view> source = line(kSourceField);
  if (!source || *source != source_digest) return std::nullopt;
  std::optional<std::string_view> sealed = line(kSealField);
  if (!sealed || !seal.opens(sealed_part(source_digest, data), *sealed)) return std::nullopt;
  return decode_documents(data);
}

ParseCache::ParseCache(fs::path dir, const CacheSeal* seal) : dir_(std::move(dir)), seal_(seal) {}

std::vector<Node> ParseCache::parse_documents(std::string_view text, std::string_view source) {
  if (dir_.empty() || text.size() < kMinimumSize) return yaml::parse_documents(text, source);
  if (!seal_) seal_ = &CacheSeal::user();
  if (!seal_->has_key()) return yaml::parse_documents(text, source);
  std::string digest = sha256_digest(text);
  fs::path entry = dir_ / digest.substr(digest.find(':') + 1);
  // An entry is at most its text's bound and what decoding adds to it.
  if (auto data = read_kept_file(entry.string(), 4 * kMaxInputBytes)) {
    if (auto documents = decode_entry(*data, digest, *seal_)) return std::move(*documents);
  }
  // Parsed earlier in this run (a build reads the component manifests twice):
  // decoded from the pending entry, written once.
  for (const auto& [pending, data] : pending_) {
    if (pending != entry) continue;
    if (auto documents = decode_entry(data, digest, *seal_)) return std::move(*documents);
  }
  auto documents = yaml::parse_documents(text, source);
  pending_.emplace_back(std::move(entry), encode_entry(digest, documents, *seal_));
  return documents;
}

void ParseCache::commit() {
  for (const auto& [entry, data] : pending_) write_entry(entry, data);
  pending_.clear();
}

ParseCache user_parse_cache(const std::string& cache_root) {
  if (cache_root.empty() || std::getenv("FLUXOPCTL_NO_PARSE_CACHE")) return ParseCache({});
  return ParseCache(fs::path(cache_root) / "parsed");
}

std::vector<Node> parse_documents(std::string_view text, std::string_view source,
                                  ParseCache* cache) {
  return cache ? cache->parse_documents(text, source) : parse_documents(text, source);
}

}  // namespace fluxop::yaml
