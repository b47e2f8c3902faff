#include "core/daemon/metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/file.h"

namespace fluxop::daemon {

namespace {

// The controller label of the reconcile metrics: the name controller-runtime
// gives the Flux Operator's FluxInstance controller.
constexpr std::string_view kController = "fluxinstance";

using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

// A sample value as Prometheus' Go client writes it (strconv.FormatFloat with
// 'g' and the shortest precision): an exponent below -4 or from 6 on is
// written in scientific notation, "1e+06", so dashboards see the same text.
std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  auto scientific =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  std::string_view text(buffer, static_cast<std::size_t>(scientific.ptr - buffer));
  int exponent = 0;
  std::string_view digits = text.substr(text.find('e') + 1);
  if (digits.front() == '+') digits.remove_prefix(1);
  std::from_chars(digits.data(), digits.data() + digits.size(), exponent);
  if (exponent < -4 || exponent >= 6) return std::string(text);
  auto fixed = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed);
  return std::string(buffer, fixed.ptr);
}

// A label value escaped as the exposition format requires.
std::string escape_label_value(std::string_view value) {
  std::string escaped;
  escaped.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      escaped += "\\\\";
    } else if (c == '"') {
      escaped += "\\\"";
    } else if (c == '\n') {
      escaped += "\\n";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

void write_family(std::string& out, std::string_view name, std::string_view help,
                  std::string_view type) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void write_sample(std::string& out, std::string_view name, const Labels& labels, double value) {
  out.append(name);
  if (!labels.empty()) {
    out += '{';
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) out += ',';
      out.append(labels[i].first).append("=\"");
      out.append(escape_label_value(labels[i].second)).append("\"");
    }
    out += '}';
  }
  out.append(" ").append(format_value(value)).append("\n");
}

// A file from /proc; "" when it cannot be read or holds more than `limit`
// bytes.
std::string read_proc_file(const char* path, std::size_t limit) {
  return read_kept_file(path, limit).value_or("");
}

// When the machine booted, in seconds since the epoch (/proc/stat's btime).
// Only the first word of each line is read: the others can be long.
std::optional<double> boot_time() {
  std::istringstream in(read_proc_file("/proc/stat", kMaxInputBytes));
  std::string key;
  while (in >> key) {
    if (key == "btime") {
      double seconds = 0;
      if (in >> seconds) return seconds;
      return std::nullopt;
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return std::nullopt;
}

// The fields of /proc/self/stat after the command's name (which may hold
// spaces and parentheses): the first is the state, field 3 of proc(5).
std::vector<std::string> self_stat_fields() {
  std::string stat = read_proc_file("/proc/self/stat", 4096);
  std::size_t name_end = stat.rfind(')');
  if (name_end == std::string::npos) return {};
  std::vector<std::string> fields;
  std::size_t at = name_end + 1;
  while (true) {
    at = stat.find_first_not_of(" \n", at);
    if (at == std::string::npos) break;
    std::size_t end = std::min(stat.find_first_of(" \n", at), stat.size());
    fields.push_back(stat.substr(at, end - at));
    at = end;
  }
  return fields;
}

// proc(5)'s numbered field of /proc/self/stat, from self_stat_fields().
std::optional<double> stat_field(const std::vector<std::string>& fields, std::size_t number) {
  if (number - 3 >= fields.size()) return std::nullopt;
  const std::string& field = fields[number - 3];
  unsigned long long value = 0;
  auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc() || end != field.data() + field.size()) return std::nullopt;
  return static_cast<double>(value);
}

std::optional<double> soft_limit(int resource) {
  rlimit limit{};
  if (getrlimit(resource, &limit) != 0) return std::nullopt;
  // RLIM_INFINITY is written as its value, 2^64-1, as the Go client does.
  return static_cast<double>(limit.rlim_cur);
}

// The process collector of Prometheus' Go client, on Linux: its names, help
// and types; a value that cannot be read is left out, as it leaves it out.
void write_process_metrics(std::string& out) {
  std::vector<std::string> stat = self_stat_fields();
  double ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
  double page_size = static_cast<double>(sysconf(_SC_PAGESIZE));
  auto write = [&](std::string_view name, std::string_view help, std::string_view type,
                   std::optional<double> value) {
    if (!value) return;
    write_family(out, name, help, type);
    write_sample(out, name, {}, *value);
  };

  std::optional<double> cpu_ticks;
  if (auto user = stat_field(stat, 14), system = stat_field(stat, 15); user && system) {
    cpu_ticks = *user + *system;
  }
  write("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter",
        cpu_ticks ? std::optional(*cpu_ticks / ticks_per_second) : std::nullopt);

  write("process_max_fds", "Maximum number of open file descriptors.", "gauge",
        soft_limit(RLIMIT_NOFILE));

  std::error_code error;
  std::filesystem::directory_iterator fds("/proc/self/fd", error);
  write("process_open_fds", "Number of open file descriptors.", "gauge",
        error ? std::nullopt : std::optional(static_cast<double>(std::distance(fds, {}))));

  std::optional<double> resident_pages = stat_field(stat, 24);
  write("process_resident_memory_bytes", "Resident memory size in bytes.", "gauge",
        resident_pages ? std::optional(*resident_pages * page_size) : std::nullopt);

  // The boot time cannot change while the process runs.
  static const std::optional<double> booted = boot_time();
  std::optional<double> start_ticks = stat_field(stat, 22);
  write("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
        "gauge",
        booted && start_ticks ? std::optional(*booted + *start_ticks / ticks_per_second)
                              : std::nullopt);

  write("process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge",
        stat_field(stat, 23));
  write("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.",
        "gauge", soft_limit(RLIMIT_AS));
}

}  // namespace

void Metrics::set_instance(const InstanceInfo& info) {
  std::lock_guard lock(mutex_);
  instance_ = info;
}

void Metrics::clear_instance() {
  std::lock_guard lock(mutex_);
  instance_.reset();
}

void Metrics::set_resources(const std::vector<report::FluxResource>& resources) {
  std::vector<report::ResourceLabels> labels;
  labels.reserve(resources.size());
  for (const report::FluxResource& resource : resources)
    labels.push_back(report::resource_labels(resource));
  // By their label values in label name order, as the Go client gathers them.
  std::sort(labels.begin(), labels.end());
  // Kept as the text each scrape writes: about 300 bytes a resource, a
  // fifth of the labels' maps, held between reports.
  std::string samples;
  for (const report::ResourceLabels& resource : labels) {
    // A std::map: the labels in name order, as the Go client writes them.
    write_sample(samples, "flux_resource_info", Labels(resource.begin(), resource.end()), 1);
  }
  samples.shrink_to_fit();
  std::lock_guard lock(mutex_);
  resource_samples_ = std::move(samples);
}

void Metrics::observe_reconcile(std::string_view result, std::chrono::duration<double> seconds) {
  auto known = std::find(kResults.begin(), kResults.end(), result);
  if (known == kResults.end()) {
    throw std::invalid_argument("not a reconcile result: " + std::string(result));
  }
  auto bucket = std::lower_bound(kBuckets.begin(), kBuckets.end(), seconds.count());
  std::lock_guard lock(mutex_);
  ++reconciles_[static_cast<std::size_t>(known - kResults.begin())];
  ++observations_[static_cast<std::size_t>(bucket - kBuckets.begin())];
  seconds_sum_ += seconds.count();
}

// The families in name order, as the Go client gathers them.
std::string Metrics::render() const {
  std::optional<InstanceInfo> instance;
  std::string resource_samples;
  std::array<std::uint64_t, kResults.size()> reconciles{};
  std::array<std::uint64_t, kBuckets.size() + 1> observations{};
  double seconds_sum = 0;
  {
    std::lock_guard lock(mutex_);
    instance = instance_;
    resource_samples = resource_samples_;
    reconciles = reconciles_;
    observations = observations_;
    seconds_sum = seconds_sum_;
  }

  std::string out;
  auto errors = static_cast<std::size_t>(std::find(kResults.begin(), kResults.end(), "error") -
                                         kResults.begin());
  write_family(out, "controller_runtime_reconcile_errors_total",
               "Total number of reconciliation errors per controller", "counter");
  write_sample(out, "controller_runtime_reconcile_errors_total", {{"controller", kController}},
               static_cast<double>(reconciles[errors]));

  // Like controller-runtime's, the histogram appears with the first reconcile.
  std::uint64_t count = 0;
  for (std::uint64_t n : observations) count += n;
  if (count > 0) {
    std::string_view name = "controller_runtime_reconcile_time_seconds";
    write_family(out, name, "Length of time per reconciliation per controller", "histogram");
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i <= kBuckets.size(); ++i) {
      cumulative += observations[i];
      std::string bound = i < kBuckets.size() ? format_value(kBuckets[i]) : "+Inf";
      write_sample(out, "controller_runtime_reconcile_time_seconds_bucket",
                   {{"controller", kController}, {"le", bound}}, static_cast<double>(cumulative));
    }
    write_sample(out, "controller_runtime_reconcile_time_seconds_sum",
                 {{"controller", kController}}, seconds_sum);
    write_sample(out, "controller_runtime_reconcile_time_seconds_count",
                 {{"controller", kController}}, static_cast<double>(count));
  }

  // Every result from the start, as controller-runtime initializes them.
  write_family(out, "controller_runtime_reconcile_total",
               "Total number of reconciliations per controller", "counter");
  for (std::size_t i = 0; i < kResults.size(); ++i) {
    write_sample(out, "controller_runtime_reconcile_total",
                 {{"controller", kController}, {"result", kResults[i]}},
                 static_cast<double>(reconciles[i]));
  }

  if (instance) {
    write_family(out, "flux_instance_info", "The current status of a Flux instance.", "gauge");
    // The labels in name order, as the Go client writes them.
    write_sample(out, "flux_instance_info",
                 {{"exported_namespace", instance->ns},
                  {"kind", instance->kind},
                  {"name", instance->name},
                  {"ready", instance->ready},
                  {"reason", instance->reason ? std::string(name(*instance->reason)) : ""},
                  {"registry", instance->registry},
                  {"revision", instance->revision},
                  {"suspended", instance->suspended ? "True" : "False"},
                  {"uid", instance->uid}},
                 1);
  }

  if (!resource_samples.empty()) {
    write_family(out, "flux_resource_info", "The current status of a Flux resource reconciliation.",
                 "gauge");
    out += resource_samples;
  }

  write_process_metrics(out);
  return out;
}

}  // namespace fluxop::daemon
