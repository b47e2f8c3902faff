// Scalar resolution rules. Input follows Go's yaml.v3 (YAML 1.2 core schema,
// what kustomize reads with); output quoting follows yaml.v2 (YAML 1.1, what
// sigs.k8s.io/yaml writes with), hence two resolvers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/yaml/node.h"

namespace fluxop::yaml {

// The tag of a plain (unquoted) scalar; nullopt when it is null.
std::optional<Tag> resolve_plain(std::string_view text);

// How a null was written, read from the text at its position: "null",
// "Null", "NULL" or "~" when `rest` starts with one as a whole word, else "".
std::string_view null_word_at(std::string_view rest);

// True when yaml.v2 would read `text`, written plain, as something other
// than a string (null, bool, number, timestamp, base-60 float): such strings
// must be quoted on output.
bool plain_is_non_string_v2(std::string_view text);

// kustomize reads its own configuration (kustomization files, JSON patch
// operations) with YAML 1.1, where plain y/yes/on and n/no/off are booleans:
// retags them so, throughout `node`.
void read_yaml11_booleans(Node& node);

// The integer value of an Int scalar's text ("0x1F", "0777", "1_000", "+5").
std::optional<std::int64_t> parse_int(std::string_view text);

// The text a scalar has after the YAML -> JSON -> YAML round trip that
// kustomize output goes through: ints in decimal, floats as Go prints them,
// timestamps in RFC 3339. Strings and bools unchanged.
std::string canonical_text(const Node& scalar);

// True when a Float scalar's canonical form is an integer (it is then
// written, and sent as JSON, as an integer).
bool float_is_integral(std::string_view canonical);

}  // namespace fluxop::yaml
