#include "core/kustomize/fieldspec.h"

#include "core/error.h"

namespace fluxop::kustomize {

namespace {

struct Step {
  std::string key;
  bool sequence = false;  // written "key[]"
};

// Splits on "/", rejoining parts whose "/" was escaped as "\/"; a leading
// "/" is allowed.
std::vector<Step> split_path(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    auto slash = path.find('/', start);
    parts.emplace_back(path.substr(start, slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (parts.size() > 1 && parts.front().empty()) parts.erase(parts.begin());
  std::vector<Step> steps;
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
    const Step& next = steps_[step];
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
    std::string kind = object_.string_at({"kind"});
    std::string name = object_.string_at({"metadata", "name"});
    throw Error(kind + "/" + name + ": " + spec_.path + ": " + message);
  }

  const yaml::Node& object_;
  const FieldSpec& spec_;
  std::vector<Step> steps_;
  const std::function<void(yaml::Node&)>& visit_;
};

bool string_field(const yaml::Node& value, std::string& out) {
  if (value.is_null()) return true;
  if (!value.is_string()) return false;
  out = value.text();
  return true;
}

FieldSpec parse_fieldspec(const yaml::Node& item, const Context& context, const std::string& field,
                          UnknownKeys unknown_keys) {
  if (!item.is_map())
    context.fail(field, "expected a map, found a " + std::string(kind_name(item)));
  FieldSpec spec;
  for (const auto& [key, value] : item.entries()) {
    std::string* text = key == "group"     ? &spec.gvk.group
                        : key == "version" ? &spec.gvk.version
                        : key == "kind"    ? &spec.gvk.kind
                        : key == "path"    ? &spec.path
                                           : nullptr;
    if (text) {
      if (!string_field(value, *text)) context.fail(field + "." + key, "expected a string");
    } else if (key == "create") {
      if (value.is_null()) continue;
      if (!value.is_scalar() || value.tag() != yaml::Tag::Bool) {
        context.fail(field + "." + key, "expected a boolean");
      }
      spec.create = value.text() == "true";
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

FieldSpecs parse_fieldspecs(const yaml::Node& list, const Context& context, std::string_view field,
                            UnknownKeys unknown_keys) {
  FieldSpecs specs;
  if (list.is_null()) return specs;
  if (!list.is_sequence()) {
    context.fail(field, "expected a sequence, found a " + std::string(kind_name(list)));
  }
  for (std::size_t i = 0; i < list.items().size(); ++i) {
    std::string item_field = std::string(field) + "[" + std::to_string(i) + "]";
    specs.push_back(parse_fieldspec(list.items()[i], context, item_field, unknown_keys));
  }
  return specs;
}

}  // namespace fluxop::kustomize
