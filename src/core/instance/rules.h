// Rules across fields: the CRD's CEL validation rules, and the checks
// upstream makes only when it builds (or fails obscurely without), as far as
// they do not depend on the Flux version being rendered.
#pragma once

#include "core/instance/instance.h"
#include "core/instance/reader.h"

namespace fluxop::instance {

// Runs on the instance as read, before the operator's defaults.
void check_rules(const FluxInstance& instance, const Diagnostics& diagnostics);

}  // namespace fluxop::instance
