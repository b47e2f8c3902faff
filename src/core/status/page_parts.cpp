#include "core/status/page_parts.h"

#include <algorithm>

#include "core/ascii.h"
#include "core/base64.h"
#include "core/digest.h"

namespace fluxop::status {

namespace {

// Light by default, dark when the browser says so; tables scroll sideways
// on a phone rather than overflow.
constexpr char kStyle[] = R"css(
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #ffffff; --muted: #59636e; --line: #d1d9e0;
  --bad: #b3261e; --warn: #8a5a00; --good: #1a7f37; --head: #f6f8fa; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #30363d;
    --bad: #ff7b72; --warn: #e3b341; --good: #3fb950; --head: #161b22; }
}
body { margin: 0 auto; max-width: 80rem; padding: 1rem; font: 15px/1.45 system-ui, sans-serif;
  color: var(--fg); background: var(--bg); }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1rem 0 .25rem; color: var(--muted); }
p.meta { color: var(--muted); margin: 0 0 1rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid var(--line); }
th { background: var(--head); font-weight: 600; white-space: nowrap; }
td.message { min-width: 16rem; word-break: break-word; }
td.number { text-align: right; }
a { color: inherit; }
.unreachable, .not-ready, .failing, .false, .failed { color: var(--bad); font-weight: 600; }
.suspended, .unknown { color: var(--warn); font-weight: 600; }
.healthy, .true, .ready { color: var(--good); }
.reconciling { color: var(--warn); }
nav { display: flex; gap: 1rem; margin: 0 0 1rem; padding: 0 0 .5rem; border-bottom: 1px solid var(--line); }
nav a.current { font-weight: 600; text-decoration: none; }
form.filters { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: 0 0 1rem; }
form.filters label { display: flex; flex-direction: column; font-size: .85rem; color: var(--muted); }
form.filters select, form.filters input, form.filters button { font: inherit; padding: .25rem .4rem; }
.pager { display: flex; gap: 1rem; margin: 1rem 0; }
table.states td { white-space: nowrap; }
.inprogress { color: var(--warn); }
.notfound { color: var(--bad); font-weight: 600; }
.notread { color: var(--muted); }
ul.tree, ul.tree ul { list-style: none; margin: 0; padding-left: 1.25rem; border-left: 1px solid var(--line); }
ul.tree { padding-left: 0; border-left: 0; }
ul.tree li { margin: .2rem 0; word-break: break-word; }
ul.tree .message { color: var(--muted); }
)css";

}  // namespace

std::string_view page_style() { return kStyle; }

std::string content_security_policy(std::string_view form_action) {
  // The style never changes: its digest is taken once, not on each answer.
  static const std::string style_source = "'sha256-" + base64_encode(sha256_bytes(kStyle)) + "'";
  return "default-src 'none'; style-src " + style_source + "; base-uri 'none'; form-action " +
         std::string(form_action);
}

Html document_head(const Escaped& title, std::string_view policy) {
  Html head;
  head << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
          "<meta name=\"referrer\" content=\"no-referrer\">"
          "<meta http-equiv=\"Content-Security-Policy\" content=\""
       << text(policy) << "\"><title>" << title << "</title><style>" << kStyle
       << "</style></head>\n";
  return head;
}

Escaped state_class(ResourceState state) { return text(lowercase(state_name(state))); }

Escaped health_class(Health health) {
  std::string name(health_name(health));
  std::replace(name.begin(), name.end(), ' ', '-');
  return text(name);
}

Html status_cell(const std::string& status) {
  Html cell;
  if (status == "True")
    cell << "<td class=\"true\">";
  else if (status == "False")
    cell << "<td class=\"false\">";
  else
    cell << "<td class=\"unknown\">";
  cell << text(status) << "</td>";
  return cell;
}

Html yes_no_cell(bool ready) { return status_cell(ready ? "True" : "False"); }

Html cell(std::string_view value) {
  Html html;
  html << "<td>" << text(value.empty() ? "-" : value) << "</td>";
  return html;
}

Html message_cell(std::string_view value) {
  Html html;
  html << "<td class=\"message\">" << text(value) << "</td>";
  return html;
}

Html number_cell(std::int64_t value) {
  Html html;
  html << "<td class=\"number\">" << number(value) << "</td>";
  return html;
}

Html part(Markup title, Markup none, Markup header, const Html& rows, bool empty) {
  Html html;
  html << "<h3>" << title << "</h3>";
  if (empty) {
    html << "<p>" << none << "</p>";
    return html;
  }
  html << "<div class=\"scroll\"><table><thead><tr>" << header << "</tr></thead><tbody>" << rows
       << "</tbody></table></div>";
  return html;
}

Html events_table(const std::vector<ObjectEvent>& events) {
  Html rows;
  for (const ObjectEvent& event : events) {
    rows << "<tr>" << cell(event.last_seen) << "<td class=\""
         << (event.type == "Warning" ? Markup("false") : Markup("true")) << "\">"
         << text(event.type) << "</td>" << cell(event.reason) << number_cell(event.count)
         << message_cell(event.message) << "</tr>";
  }
  return part("Events", "No Events.",
              "<th>Last seen</th><th>Type</th><th>Reason</th><th>Count</th><th>Message</th>", rows,
              events.empty());
}

}  // namespace fluxop::status
