// The probe of the ctest layers_upward_include (CMakeLists.txt): a source
// of the yaml layer, which links only base, that includes a header of a
// layer above it and so must not compile. Its own layer's header comes
// first: the compile must fail on the upward include alone.
#include "core/yaml/node.h"
#include FLUXOP_UPWARD_HEADER
