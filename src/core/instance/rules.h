// Rules across fields: the CRD's CEL validation rules, and the checks
// upstream makes only when it builds (or fails obscurely without), as far as
// they do not depend on the Flux version being rendered.
#pragma once

#include <string_view>

#include "core/instance/instance.h"
#include "core/instance/reader.h"

namespace fluxop::instance {

// Runs on the instance as read, before the operator's defaults.
void check_rules(const FluxInstance& instance, const Diagnostics& diagnostics);

// Whether `name` is an image reference's name in the distribution reference
// grammar: an optional host[:port] and '/', then lowercase path components
// of [a-z0-9] runs joined by '.', '_', "__" or dashes. (Checked by hand: a
// std::regex took 0.25 ms to compile, at every build.)
bool is_image_name(std::string_view name);

}  // namespace fluxop::instance
