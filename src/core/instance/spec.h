// The CRD schema of a FluxInstance's .spec: fields, types, required fields,
// enums, patterns and limits, read into the typed model.
#pragma once

#include "core/instance/instance.h"
#include "core/instance/reader.h"

namespace fluxop::instance {

// Reads .spec of the document `root` into `instance`; the schema's defaults
// are already applied to it.
void read_spec(MapReader& root, FluxInstance& instance);

}  // namespace fluxop::instance
