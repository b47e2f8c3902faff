#include "core/kustomize/builtin_fieldspecs.h"

namespace fluxop::kustomize::builtin_fieldspecs {

namespace {

FieldSpecs joined(FieldSpecs first, const FieldSpecs& second) {
  first.insert(first.end(), second.begin(), second.end());
  return first;
}

// Label selectors inside a pod template's affinity and spread constraints.
FieldSpecs pod_selector_labels(const char* kind) {
  const char* paths[] = {
      "spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/"
      "podAffinityTerm/labelSelector/matchLabels",
      "spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/"
      "labelSelector/matchLabels",
      "spec/template/spec/affinity/podAntiAffinity/"
      "preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels",
      "spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/"
      "labelSelector/matchLabels",
      "spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels",
  };
  FieldSpecs specs;
  for (const char* path : paths) specs.push_back({{"apps", "", kind}, path, false});
  return specs;
}

FieldSpecs selector_labels() {
  FieldSpecs specs = {
      {{"", "v1", "Service"}, "spec/selector", true},
      {{"", "v1", "ReplicationController"}, "spec/selector", true},
      {{"", "", "Deployment"}, "spec/selector/matchLabels", true},
  };
  specs = joined(specs, pod_selector_labels("Deployment"));
  specs = joined(specs, {
                            {{"", "", "ReplicaSet"}, "spec/selector/matchLabels", true},
                            {{"", "", "DaemonSet"}, "spec/selector/matchLabels", true},
                            {{"apps", "", "StatefulSet"}, "spec/selector/matchLabels", true},
                        });
  specs = joined(specs, pod_selector_labels("StatefulSet"));
  return joined(
      specs,
      {
          {{"batch", "", "Job"}, "spec/selector/matchLabels", false},
          {{"batch", "", "CronJob"}, "spec/jobTemplate/spec/selector/matchLabels", false},
          {{"policy", "", "PodDisruptionBudget"}, "spec/selector/matchLabels", false},
          {{"networking.k8s.io", "", "NetworkPolicy"}, "spec/podSelector/matchLabels", false},
          {{"networking.k8s.io", "", "NetworkPolicy"},
           "spec/ingress/from/podSelector/matchLabels",
           false},
          {{"networking.k8s.io", "", "NetworkPolicy"},
           "spec/egress/to/podSelector/matchLabels",
           false},
      });
}

// The same template paths carry labels and annotations (`leaf`).
FieldSpecs template_metadata(const std::string& leaf, const std::string& stateful_set_group) {
  return {
      {{}, "metadata/" + leaf, true},
      {{"", "v1", "ReplicationController"}, "spec/template/metadata/" + leaf, true},
      {{"", "", "Deployment"}, "spec/template/metadata/" + leaf, true},
      {{"", "", "ReplicaSet"}, "spec/template/metadata/" + leaf, true},
      {{"", "", "DaemonSet"}, "spec/template/metadata/" + leaf, true},
      {{stateful_set_group, "", "StatefulSet"}, "spec/template/metadata/" + leaf, true},
      {{"batch", "", "Job"}, "spec/template/metadata/" + leaf, true},
      {{"batch", "", "CronJob"}, "spec/jobTemplate/metadata/" + leaf, true},
      {{"batch", "", "CronJob"}, "spec/jobTemplate/spec/template/metadata/" + leaf, true},
  };
}

}  // namespace

const FieldSpecs& template_labels() {
  static const FieldSpecs specs =
      joined(template_metadata("labels", "apps"),
             {{{"apps", "", "StatefulSet"}, "spec/volumeClaimTemplates[]/metadata/labels", true}});
  return specs;
}

const FieldSpecs& common_labels() {
  static const FieldSpecs specs = joined(selector_labels(), template_labels());
  return specs;
}

const FieldSpecs& common_annotations() {
  // kustomize matches StatefulSets of any group here, unlike for labels.
  static const FieldSpecs specs = template_metadata("annotations", "");
  return specs;
}

const FieldSpecs& namespaces() {
  static const FieldSpecs specs = {
      {{"", "", "Namespace"}, "metadata/name", true},
      {{"apiregistration.k8s.io", "", "APIService"}, "spec/service/namespace", true},
      {{"apiextensions.k8s.io", "", "CustomResourceDefinition"},
       "spec/conversion/webhook/clientConfig/service/namespace",
       false},
  };
  return specs;
}

const FieldSpecs& images() {
  static const FieldSpecs specs = {
      {{}, "spec/containers[]/image", true},
      {{}, "spec/initContainers[]/image", true},
      {{}, "spec/template/spec/containers[]/image", true},
      {{}, "spec/template/spec/initContainers[]/image", true},
  };
  return specs;
}

}  // namespace fluxop::kustomize::builtin_fieldspecs
