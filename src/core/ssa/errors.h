// Classes of API errors the engine acts on, decided from the Status object
// the server answered: its reason and the causes it details.
#pragma once

#include "core/kube/object.h"

namespace fluxop::ssa {

// The change touches a field that cannot change once set (a Deployment's
// selector, a Service's clusterIP, a CEL rule `self == oldSelf`): the object
// must be recreated.
bool is_immutable_field(const kube::ApiError& error);

// The server refused the request as invalid (422): a failed `test` of a JSON
// patch is one.
bool is_invalid(const kube::ApiError& error);

// The caller may not make the request: unauthenticated (401) or forbidden
// (403). What only informs (a diagnosis, the installed Flux version) goes on
// without it; what the task needs fails.
bool is_not_allowed(const kube::ApiError& error);

}  // namespace fluxop::ssa
