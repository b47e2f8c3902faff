#include "core/kustomize/fieldspec.h"

#include "core/error.h"
#include "core/yaml/scalar.h"

namespace fluxop::kustomize {

namespace {

struct PathStep {
  std::string key;
  bool sequence = false;  // written "key[]"
};

// Splits on "/", rejoining parts whose "/" was escaped as "\/"; a leading
// "/" is allowed.
std::vector<PathStep> split_path(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    auto slash = path.find('/', start);
    parts.emplace_back(path.substr(start, slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (parts.size() > 1 && parts.front().empty()) parts.erase(parts.begin());
  std::vector<PathStep> steps;
  for (auto& part : parts) {
    if (!steps.empty() && steps.back().key.ends_with('\\')) {
      steps.back().key.back() = '/';
      steps.back().key += part;
    } else {
      steps.push_back({std::move(part)});
    }
  }
  for (auto& step : steps) {
    if (step.key.ends_with("[]")) {
      step.key.resize(step.key.size() - 2);
      step.sequence = true;
    }
  }
  return steps;
}

class Walk {
 public:
  Walk(const yaml::Node& object, const FieldSpec& spec,
       const std::function<void(yaml::Node&)>& visit)
      : object_(object), spec_(spec), steps_(split_path(spec.path)), visit_(visit) {}

  void from(yaml::Node& node, std::size_t step) {
    if (step == steps_.size()) return visit_(node);
    switch (node.kind()) {
      case yaml::Node::Kind::Null:
        return;
      case yaml::Node::Kind::Sequence:
        for (auto& item : node.items()) from(item, step);
        return;
      case yaml::Node::Kind::Map:
        return enter(node, step);
      case yaml::Node::Kind::Scalar:
        fail("expected a map or sequence before '" + steps_[step].key + "', found a scalar");
    }
  }

 private:
  void enter(yaml::Node& map, std::size_t step) {
    const PathStep& next = steps_[step];
    if (next.key.empty()) fail("empty field name");
    bool last = step + 1 == steps_.size();
    yaml::Node* child = map.get(next.key);
    if (!child) {
      if (!spec_.create || next.sequence) return;
      child = &map.get_or_insert(next.key, last ? yaml::Node() : yaml::Node::map());
    } else if (child->is_null() && next.sequence) {
      *child = yaml::Node::sequence();
    } else if (child->is_null() && spec_.create && !last) {
      *child = yaml::Node::map();
    }
    from(*child, step + 1);
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw Error(field_location(object_, spec_) + ": " + message);
  }

  const yaml::Node& object_;
  const FieldSpec& spec_;
  std::vector<PathStep> steps_;
  const std::function<void(yaml::Node&)>& visit_;
};

FieldSpec parse_fieldspec(const yaml::Node& item, const Context& context, const std::string& field,
                          UnknownKeys unknown_keys) {
  if (!item.is_map()) context.fail(field, "expected a map, found " + describe_value(item));
  FieldSpec spec;
  for (const auto& [key, value] : item.entries()) {
    std::string key_field = field + "." + key;
    if (key == "group") {
      spec.gvk.group = config_string(value, context, key_field);
    } else if (key == "version") {
      spec.gvk.version = config_string(value, context, key_field);
    } else if (key == "kind") {
      spec.gvk.kind = config_string(value, context, key_field);
    } else if (key == "path") {
      spec.path = config_string(value, context, key_field);
    } else if (key == "create") {
      spec.create = config_bool(value, context, key_field);
    } else if (unknown_keys == UnknownKeys::Reject) {
      context.fail(field, "unknown field \"" + key + "\"");
    }
  }
  return spec;
}

}  // namespace

bool selects(const FieldSpec& spec, const Gvk& gvk) {
  return (spec.gvk.group.empty() || spec.gvk.group == gvk.group) &&
         (spec.gvk.version.empty() || spec.gvk.version == gvk.version) &&
         (spec.gvk.kind.empty() || spec.gvk.kind == gvk.kind);
}

void visit_fields(yaml::Node& object, const FieldSpec& spec,
                  const std::function<void(yaml::Node&)>& visit) {
  Gvk gvk = gvk_from(object.string_at({"apiVersion"}), object.string_at({"kind"}));
  if (!selects(spec, gvk)) return;
  Walk(object, spec, visit).from(object, 0);
}

std::string describe_value(const yaml::Node& value) {
  if (value.is_string()) return "\"" + value.text() + "\"";
  if (value.is_scalar()) return value.text();
  return "a " + std::string(kind_name(value));
}

bool merge_fieldspec(FieldSpecs& specs, const FieldSpec& spec) {
  for (const auto& existing : specs) {
    if (existing.path == spec.path && selects(spec, existing.gvk)) {
      return existing.create == spec.create;
    }
  }
  specs.push_back(spec);
  return true;
}

std::string config_string(const yaml::Node& value, const Context& context, std::string_view field) {
  if (value.is_null()) return {};
  if (value.is_scalar() &&
      (value.tag() == yaml::Tag::String || value.tag() == yaml::Tag::Timestamp)) {
    return value.text();
  }
  context.fail(field, "expected a string, found " + describe_value(value));
}

bool config_bool(const yaml::Node& value, const Context& context, std::string_view field) {
  if (value.is_null()) return false;
  if (!value.is_scalar() || value.tag() != yaml::Tag::Bool) {
    context.fail(field, "expected true or false, found " + describe_value(value));
  }
  return canonical_text(value) == "true";
}

std::string field_location(const yaml::Node& object, const FieldSpec& spec) {
  ResourceId id{gvk_from(object.string_at({"apiVersion"}), object.string_at({"kind"})),
                object.string_at({"metadata", "name"}),
                object.string_at({"metadata", "namespace"})};
  return id.to_string() + ": " + spec.path;
}

FieldSpecs parse_fieldspecs(const yaml::Node& list, const Context& context, std::string_view field,
                            UnknownKeys unknown_keys) {
  FieldSpecs specs;
  if (list.is_null()) return specs;
  if (!list.is_sequence()) {
    context.fail(field, "expected a sequence, found " + describe_value(list));
  }
  for (std::size_t i = 0; i < list.items().size(); ++i) {
    std::string item_field = std::string(field) + "[" + std::to_string(i) + "]";
    specs.push_back(parse_fieldspec(list.items()[i], context, item_field, unknown_keys));
  }
  return specs;
}

}  // namespace fluxop::kustomize
