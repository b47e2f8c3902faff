// kustomize's default field spec lists (v5.5.0): where its builtin
// transformers find labels, annotations, namespaces and images.
#pragma once

#include "core/kustomize/fieldspec.h"

namespace fluxop::kustomize::builtin_fieldspecs {

// Labels on metadata and on the pod, job and claim templates that the
// workload kinds stamp out (`labels` with includeTemplates).
const FieldSpecs& template_labels();
// template_labels plus the selectors that must keep matching those
// templates (`commonLabels`, `labels` with includeSelectors).
const FieldSpecs& common_labels();
// Annotations on metadata and on pod and job templates.
const FieldSpecs& common_annotations();
// Namespace fields besides metadata.namespace, which the namespace
// transformer handles itself.
const FieldSpecs& namespaces();
// Container image fields.
const FieldSpecs& images();

}  // namespace fluxop::kustomize::builtin_fieldspecs
