#include "core/ssa/errors.h"

#include <algorithm>

namespace fluxop::ssa {

bool is_immutable_field(const kube::ApiError& error) {
  if (error.status() != 422 || error.reason() != "Invalid") return false;
  // Built-in validation says "field is immutable"; CEL rules of CRDs (as
  // x-kubernetes-validations messages) say "... is immutable".
  return std::any_of(error.causes().begin(), error.causes().end(), [](const auto& cause) {
    return (cause.type == "FieldValueInvalid" || cause.type == "FieldValueForbidden") &&
           cause.message.find("immutable") != std::string::npos;
  });
}

bool is_invalid(const kube::ApiError& error) { return error.status() == 422; }

bool is_not_allowed(const kube::ApiError& error) {
  return error.status() == 401 || error.status() == 403;
}

}  // namespace fluxop::ssa
