// The daemon's loop in memory: a source whose instance the test sets, and
// actions that record what they were asked to do.
#include "core/daemon/daemon.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

#include "../eventually.h"
#include "../instance/support.h"

namespace fluxop::daemon {
namespace {

using fluxop::testing::eventually;

// A pipe is its change descriptor: set() writes to it.
class FakeSource : public InstanceSource {
 public:
  // Each change is read before the next is made: the loop reads a burst of
  // changes once.
  FakeSource() { REQUIRE(pipe2(fds_, O_NONBLOCK | O_CLOEXEC) == 0); }
  ~FakeSource() override {
    close(fds_[0]);
    close(fds_[1]);
  }
  int change_fd() const override { return fds_[0]; }
  Observed read() override {
    ++reads;
    char buffer[64];
    while (::read(fds_[0], buffer, sizeof buffer) > 0) {
    }
    std::lock_guard lock(mutex_);
    return observed_;
  }
  // No instance: it does not load.
  void set_problem(const std::string& problem) {
    {
      std::lock_guard lock(mutex_);
      observed_ = Observed{};
      observed_.problem = problem;
    }
    [[maybe_unused]] ssize_t n = ::write(fds_[1], "x", 1);
  }
  // An object in the cluster, under `key`, that does not load.
  void set_unreadable(const std::string& key, const std::string& problem) {
    {
      std::lock_guard lock(mutex_);
      observed_ = Observed{};
      observed_.key = key;
      observed_.problem = problem;
    }
    [[maybe_unused]] ssize_t n = ::write(fds_[1], "x", 1);
  }
  // The instance with `annotations` (YAML lines under metadata.annotations),
  // under `key`.
  void set(const std::string& key, const std::string& annotations = "", bool deleting = false) {
    std::string text(instance::testing::kMinimal);
    // Never reconciled on a timer: only changes and retries drive the loop here.
    std::string all = "    fluxcd.controlplane.io/reconcileEvery: \"0s\"\n" + annotations;
    text.replace(text.find("  name: flux\n"), 12, "  name: flux\n  annotations:\n" + all);
    Observed observed;
    observed.flux = instance::testing::load(text);
    observed.key = key;
    observed.deleting = deleting;
    {
      std::lock_guard lock(mutex_);
      observed_ = std::move(observed);
    }
    [[maybe_unused]] ssize_t n = ::write(fds_[1], "x", 1);
  }

  std::atomic<int> reads{0};

 private:
  int fds_[2];
  std::mutex mutex_;
  Observed observed_;
};

struct Harness {
  FakeSource source;
  std::ostringstream log_text;
  Logger log{log_text, LogFormat::text};
  Metrics metrics;
  int stop_fds[2];
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::vector<std::string> reconciled;  // the key of each reconcile asked for
  std::vector<std::string> events;      // "<reason>: <message>"
  std::vector<std::string> reports;     // the key of each report asked for
  // What the next reconciles throw, in order; then they succeed.
  std::vector<reconcile::Failure> failures;
  // Called by each reconcile first (it may throw).
  std::function<void(const Observed&)> on_reconcile;
  std::unique_ptr<Daemon> daemon;
  std::thread thread;

  Harness() {
    REQUIRE(pipe2(stop_fds, O_NONBLOCK | O_CLOEXEC) == 0);
    DaemonActions actions;
    actions.reconcile = [this](const Observed& observed) {
      std::lock_guard lock(mutex);
      reconciled.push_back(observed.key);
      if (on_reconcile) on_reconcile(observed);
      if (!failures.empty()) {
        reconcile::Failure failure = failures.front();
        failures.erase(failures.begin());
        throw reconcile::ReconcileError(failure, "it failed");
      }
      return Reconciled{"v2.9.0@sha256:0123", "", "uid-1"};
    };
    actions.artifact_digest = [](const instance::FluxInstance&) { return std::string(); };
    actions.event = [this](const Observed&, const reconcile::InstanceEvent& event) {
      std::lock_guard lock(mutex);
      events.push_back(std::string(name(event.reason)) + ": " + event.message);
    };
    actions.unreadable = [this](const Observed& observed) {
      std::lock_guard lock(mutex);
      events.push_back("unreadable " + observed.key + ": " + observed.problem);
    };
    actions.disabled = [this](const Observed& observed) {
      std::lock_guard lock(mutex);
      events.push_back("status disabled: " + observed.key);
    };
    actions.uninstall = [this](const Observed& observed) {
      std::lock_guard lock(mutex);
      reconciled.push_back("uninstall " + observed.key);
      if (!failures.empty()) {
        failures.erase(failures.begin());
        throw Error("it failed");
      }
    };
    actions.report = [this](const Observed& observed,
                            std::optional<std::chrono::system_clock::time_point>) {
      std::lock_guard lock(mutex);
      reports.push_back(observed.key);
    };
    daemon = std::make_unique<Daemon>(source, actions, log, metrics, stop_fds[0],
                                      [this] { return stop.load(); });
  }
  void start() {
    thread = std::thread([this] { daemon->run(); });
  }
  // Stops the loop: what it logged can be read then.
  std::string finish() {
    stop = true;
    [[maybe_unused]] ssize_t n = ::write(stop_fds[1], "x", 1);
    if (thread.joinable()) thread.join();
    return log_text.str();
  }
  ~Harness() {
    finish();
    close(stop_fds[0]);
    close(stop_fds[1]);
  }
  // Changes the source and waits for the loop to read it.
  template <typename Change>
  void change(Change make) {
    int before = source.reads;
    make();
    REQUIRE(eventually([&] { return source.reads > before; }));
  }
  std::vector<std::string> keys() {
    std::lock_guard lock(mutex);
    return reconciled;
  }
  std::vector<std::string> recorded() {
    std::lock_guard lock(mutex);
    return events;
  }
  std::vector<std::string> reported() {
    std::lock_guard lock(mutex);
    return reports;
  }
};

TEST_CASE("daemon: reconciles the instance read, then each new key, not a re-read one") {
  Harness harness;
  harness.source.set("k1");
  harness.start();
  REQUIRE(eventually([&] { return harness.keys().size() == 1; }));
  CHECK(harness.daemon->started());
  harness.change([&] { harness.source.set("k1"); });  // read again, the same
  harness.change([&] { harness.source.set("k2"); });
  REQUIRE(eventually([&] { return harness.keys().size() >= 2; }));
  CHECK(harness.keys() == std::vector<std::string>{"k1", "k2"});
  CHECK(harness.metrics.render().find("ready=\"True\"") != std::string::npos);
}

TEST_CASE("daemon: the report is made after each reconcile, and while reconciliation is disabled") {
  Harness harness;
  harness.source.set("k1");
  harness.start();
  REQUIRE(eventually([&] { return harness.reported().size() == 1; }));
  CHECK(harness.keys() == std::vector<std::string>{"k1"});
  harness.change([&] { harness.source.set("k2"); });
  REQUIRE(eventually([&] { return harness.reported().size() == 2; }));
  CHECK(harness.reported() == std::vector<std::string>{"k1", "k2"});
  // Not again before its interval (5 minutes) when nothing is reconciled.
  harness.change(
      [&] { harness.source.set("k3", "    fluxcd.controlplane.io/reconcile: disabled\n"); });
  CHECK(harness.reported().size() == 2);

  Harness disabled;
  disabled.source.set("k1", "    fluxcd.controlplane.io/reconcile: disabled\n");
  disabled.start();
  REQUIRE(eventually([&] { return disabled.reported().size() == 1; }));
  CHECK(disabled.keys().empty());
}

TEST_CASE("daemon: a failed reconcile is retried after its backoff, its reason exported") {
  Harness harness;
  harness.failures = {reconcile::Failure::reconciliation};
  harness.source.set("k1");
  harness.start();
  REQUIRE(eventually([&] { return harness.keys().size() == 2; }));
  CHECK(harness.keys() == std::vector<std::string>{"k1", "k1"});
  CHECK(harness.finish().find("reason=ReconciliationFailed error=\"it failed\"") !=
        std::string::npos);
  CHECK(harness.metrics.render().find(
            "controller_runtime_reconcile_errors_total{controller=\"fluxinstance\"} 1") !=
        std::string::npos);
}

TEST_CASE("daemon: a render made stale by another apply is rendered again from a new read") {
  Harness harness;
  harness.on_reconcile = [&](const Observed& observed) {
    if (observed.key != "k1") return;
    // Another apply changed the instance while this one waited for the Lease.
    harness.source.set("k2");
    throw reconcile::StaleRender("generation 2 is in the cluster, generation 1 was rendered", 2);
  };
  harness.source.set("k1");
  harness.start();
  REQUIRE(eventually([&] { return harness.keys().size() == 2; }));
  CHECK(harness.keys() == std::vector<std::string>{"k1", "k2"});
  std::string log = harness.finish();
  CHECK(log.find("generation 1 was rendered") != std::string::npos);
  CHECK(log.find("Reconciler error") == std::string::npos);
}

TEST_CASE("daemon: disabled, an event says so once and nothing is reconciled until enabled") {
  Harness harness;
  harness.source.set("k1", "    fluxcd.controlplane.io/reconcile: disabled\n");
  harness.start();
  REQUIRE(eventually([&] { return harness.recorded().size() == 2; }));
  CHECK(harness.recorded() ==
        std::vector<std::string>{"ReconciliationDisabled: Reconciliation is disabled",
                                 "status disabled: k1"});
  CHECK(harness.metrics.render().find("suspended=\"True\"") != std::string::npos);
  harness.change(
      [&] { harness.source.set("k2", "    fluxcd.controlplane.io/reconcile: Disabled\n"); });
  harness.change(
      [&] { harness.source.set("k3", "    fluxcd.controlplane.io/reconcile: enabled\n"); });
  REQUIRE(eventually([&] { return harness.keys().size() == 1; }));
  // Neither k1 nor k2 was reconciled, and the event was not repeated.
  CHECK(harness.keys() == std::vector<std::string>{"k3"});
  CHECK(harness.recorded().size() == 2);
}

TEST_CASE("daemon: an unreadable instance is logged once, the last one stays applied") {
  Harness harness;
  harness.source.set("k1");
  harness.start();
  REQUIRE(eventually([&] { return harness.keys().size() == 1; }));
  for (int i = 0; i < 2; ++i)
    harness.change([&] { harness.source.set_problem("instance.yaml:3:1: bad indentation"); });
  harness.change([&] { harness.source.set("k2"); });
  REQUIRE(eventually([&] { return harness.keys().size() == 2; }));
  std::string log = harness.finish();
  std::size_t first = log.find("cannot read the FluxInstance");
  REQUIRE(first != std::string::npos);
  CHECK(log.find("cannot read the FluxInstance", first + 1) == std::string::npos);
  CHECK(harness.keys() == std::vector<std::string>{"k1", "k2"});
}

TEST_CASE("daemon: an object that does not load is said unreadable once per key, not reconciled") {
  Harness harness;
  harness.source.set("k1");
  harness.start();
  REQUIRE(eventually([&] { return harness.keys().size() == 1; }));
  // Read again after its status is written: said once.
  for (int i = 0; i < 2; ++i)
    harness.change([&] { harness.source.set_unreadable("k2", ".spec.components[4]: foo"); });
  harness.change([&] { harness.source.set_unreadable("k3", ".spec.components[4]: bar"); });
  CHECK(harness.recorded() == std::vector<std::string>{"unreadable k2: .spec.components[4]: foo",
                                                       "unreadable k3: .spec.components[4]: bar"});
  CHECK(harness.keys() == std::vector<std::string>{"k1"});
  harness.change([&] { harness.source.set("k4"); });
  REQUIRE(eventually([&] { return harness.keys().size() == 2; }));
  CHECK(harness.keys() == std::vector<std::string>{"k1", "k4"});
}

TEST_CASE("daemon: an instance being deleted is uninstalled, disabled or not, retried on failure") {
  Harness harness;
  harness.source.set("k1", "    fluxcd.controlplane.io/reconcile: disabled\n");
  harness.start();
  REQUIRE(eventually([&] { return harness.recorded().size() == 2; }));
  harness.failures = {reconcile::Failure::reconciliation};
  harness.change([&] {
    harness.source.set("k1 deleting", "    fluxcd.controlplane.io/reconcile: disabled\n", true);
  });
  REQUIRE(eventually([&] { return harness.keys().size() == 2; }));
  CHECK(harness.keys() ==
        std::vector<std::string>{"uninstall k1 deleting", "uninstall k1 deleting"});
  std::string log = harness.finish();
  CHECK_MESSAGE(log.find("the FluxInstance is being deleted: uninstalling") != std::string::npos,
                log);
  CHECK(log.find("Uninstall error") != std::string::npos);
}

}  // namespace
}  // namespace fluxop::daemon
