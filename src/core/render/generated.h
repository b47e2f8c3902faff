// The files the renderer writes beside the distribution's manifests, as
// YAML text. Instance values are inserted as plain scalars, so they take
// the YAML type they read as, like upstream's text templates give them.
#pragma once

#include <string>

#include "core/distribution/version.h"
#include "core/instance/instance.h"

namespace fluxop::render {

// The namespace, kept on prune, with pod security warnings on.
std::string namespace_manifest(const std::string& ns);

// source-controller's PersistentVolumeClaim (.spec.storage).
std::string storage_claim(const instance::Storage& storage);

// The sync source (.spec.sync.kind) and the Kustomization applying its path.
std::string sync_manifests(const instance::FluxInstance& flux,
                           const distribution::Version& version);

}  // namespace fluxop::render
