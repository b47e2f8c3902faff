#include "core/ssa/diff.h"

#include <algorithm>
#include <vector>

#include "core/kube/meta.h"

namespace fluxop::ssa {

using kube::pointer_token;
using nlohmann::json;

namespace {

constexpr std::size_t kContext = 3;

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

struct Edit {
  char op;  // ' ', '-', '+'
  std::string line;
};

// The edit script between a and b: common prefix and suffix, then a longest
// common subsequence of the middle.
std::vector<Edit> edit_script(const std::vector<std::string>& a,
                              const std::vector<std::string>& b) {
  std::size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  std::size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  std::size_t n = a.size() - prefix - suffix, m = b.size() - prefix - suffix;
  // lcs[i][j]: length of the LCS of a's middle from i and b's middle from j.
  std::vector<std::uint32_t> lcs((n + 1) * (m + 1), 0);
  auto at = [&](std::size_t i, std::size_t j) -> std::uint32_t& { return lcs[i * (m + 1) + j]; };
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      at(i, j) = a[prefix + i] == b[prefix + j] ? at(i + 1, j + 1) + 1
                                                : std::max(at(i + 1, j), at(i, j + 1));
    }
  }
  std::vector<Edit> edits;
  for (std::size_t k = 0; k < prefix; ++k) edits.push_back({' ', a[k]});
  std::size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[prefix + i] == b[prefix + j]) {
      edits.push_back({' ', a[prefix + i]});
      ++i, ++j;
    } else if (j < m && (i == n || at(i, j + 1) >= at(i + 1, j))) {
      edits.push_back({'+', b[prefix + j++]});
    } else {
      edits.push_back({'-', a[prefix + i++]});
    }
  }
  for (std::size_t k = a.size() - suffix; k < a.size(); ++k) edits.push_back({' ', a[k]});
  // Removals before additions within a change, as diff(1) prints them.
  for (std::size_t k = 1; k < edits.size(); ++k) {
    for (std::size_t l = k; l > 0 && edits[l].op == '-' && edits[l - 1].op == '+'; --l)
      std::swap(edits[l], edits[l - 1]);
  }
  return edits;
}

std::string hunk_range(std::size_t start, std::size_t count) {
  if (count == 0) return std::to_string(start) + ",0";
  return std::to_string(start + 1) + (count == 1 ? "" : "," + std::to_string(count));
}

void mask_field(json& before, json& after, const char* field) {
  json* old_values = before.contains(field) && before[field].is_object() ? &before[field] : nullptr;
  json* new_values = after.contains(field) && after[field].is_object() ? &after[field] : nullptr;
  if (old_values) {
    for (auto& [key, value] : old_values->items()) {
      bool same = new_values && new_values->contains(key) && (*new_values)[key] == value;
      value = same ? "***" : "*** (before)";
    }
  }
  if (new_values) {
    for (auto& [key, value] : new_values->items()) {
      bool same = old_values && old_values->contains(key) && (*old_values)[key] == "***";
      value = same ? "***" : "*** (after)";
    }
  }
}

void collect_changes(const json& before, const json& after, const std::string& path,
                     std::vector<FieldChange>& changes) {
  if (before == after) return;
  if (before.is_object() && after.is_object()) {
    for (const auto& [key, value] : before.items()) {
      std::string field = path + "/" + pointer_token(key);
      auto found = after.find(key);
      if (found == after.end()) {
        changes.push_back({field, value, std::nullopt});
      } else {
        collect_changes(value, *found, field, changes);
      }
    }
    for (const auto& [key, value] : after.items()) {
      if (!before.contains(key))
        changes.push_back({path + "/" + pointer_token(key), std::nullopt, value});
    }
    return;
  }
  if (before.is_array() && after.is_array() && before.size() == after.size()) {
    for (std::size_t i = 0; i < before.size(); ++i)
      collect_changes(before[i], after[i], path + "/" + std::to_string(i), changes);
    return;
  }
  changes.push_back({path, before, after});
}

}  // namespace

std::vector<FieldChange> field_changes(const json& before, const json& after) {
  std::vector<FieldChange> changes;
  collect_changes(before, after, "", changes);
  return changes;
}

json comparable(json object) {
  object.erase("status");
  if (object.contains("metadata") && object["metadata"].is_object()) {
    json& metadata = object["metadata"];
    for (const char* field : {"managedFields", "resourceVersion", "generation", "uid", "selfLink",
                              "creationTimestamp", "deletionTimestamp"}) {
      metadata.erase(field);
    }
  }
  return object;
}

void mask_secrets(json& before, json& after) {
  bool secret = (before.is_object() && before.value("kind", "") == "Secret") ||
                (after.is_object() && after.value("kind", "") == "Secret");
  if (!secret) return;
  // A missing side (created or pruned) stays missing.
  json none = json::object();
  json& old_side = before.is_null() ? none : before;
  json& new_side = after.is_null() ? none : after;
  mask_field(old_side, new_side, "data");
  mask_field(old_side, new_side, "stringData");
}

std::string unified_diff(const std::string& before, const std::string& after,
                         const std::string& before_label, const std::string& after_label) {
  if (before == after) return "";
  std::vector<Edit> edits = edit_script(split_lines(before), split_lines(after));
  std::string out = std::string("--- ") + before_label + "\n+++ " + after_label + "\n";
  std::size_t k = 0;
  while (k < edits.size()) {
    while (k < edits.size() && edits[k].op == ' ') ++k;
    if (k == edits.size()) break;
    // A hunk: kContext lines around its changes; changes closer than
    // 2*kContext lines share one.
    std::size_t start = k >= kContext ? k - kContext : 0;
    std::size_t last = k;
    for (std::size_t e = k + 1; e < edits.size(); ++e) {
      if (edits[e].op == ' ') continue;
      if (e - last - 1 > 2 * kContext) break;
      last = e;
    }
    std::size_t end = std::min(edits.size(), last + 1 + kContext);
    std::size_t old_start = 0, new_start = 0;
    for (std::size_t e = 0; e < start; ++e) {
      if (edits[e].op != '+') ++old_start;
      if (edits[e].op != '-') ++new_start;
    }
    std::size_t old_count = 0, new_count = 0;
    std::string body;
    for (std::size_t e = start; e < end; ++e) {
      if (edits[e].op != '+') ++old_count;
      if (edits[e].op != '-') ++new_count;
      body += std::string(1, edits[e].op) + edits[e].line + "\n";
    }
    out += "@@ -" + hunk_range(old_start, old_count) + " +" + hunk_range(new_start, new_count) +
           " @@\n" + body;
    k = end;
  }
  return out;
}

}  // namespace fluxop::ssa
