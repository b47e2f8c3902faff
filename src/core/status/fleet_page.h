// The fleet file (`fluxopctl report --all-contexts -o html`): one HTML page
// that opens with no network, for a CI job's artifacts or a mail. A row per
// cluster, worst first, then each cluster's overview. It holds no script at
// all, and its Content-Security-Policy (default-src 'none', its one style by
// hash) lets a browser load nothing and run nothing, whatever a cluster's
// messages say.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status/html.h"
#include "core/status/overview.h"

namespace fluxop::status {

// One cluster's overview: its instance, components, reconcilers and sync.
Html cluster_overview(const ClusterOverview& cluster);

// The page of `clusters` (sorted worst first here), saying when it was made
// (`generated_at`, RFC 3339).
std::string fleet_page(std::vector<ClusterOverview> clusters, std::string_view generated_at);

}  // namespace fluxop::status
