# bash completion for fluxopctl
# FILE: the FluxInstance files (*.yaml, *.yml, *.json) and directories.
_fluxopctl_files() {
  local file
  COMPREPLY=($(compgen -d -- "$cur"))
  while IFS= read -r file; do
    [[ $file == *.yaml || $file == *.yml || $file == *.json ]] && COMPREPLY+=("$file")
  done < <(compgen -f -- "$cur")
}
_fluxopctl() {
  local cur prev command
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  # The global flags go before the command or after it
  local global_flags="--color --kubeconfig --context -n --namespace --as --as-group --request-timeout --timeout"
  if [ "$prev" = --color ]; then
    COMPREPLY=($(compgen -W "auto always never" -- "$cur"))
    return
  fi
  local i=1
  while [ "$i" -lt "$COMP_CWORD" ] && [[ "${COMP_WORDS[i]}" == -* ]]; do
    case "${COMP_WORDS[i]}" in
      --color|--kubeconfig|--context|-n|--namespace|--as|--as-group|--request-timeout|--timeout) i=$((i + 1)) ;;
    esac
    i=$((i + 1))
  done
  command=${COMP_WORDS[i]}
  if [ "$i" -eq "$COMP_CWORD" ] && [ "$prev" != --kubeconfig ] && [ "$prev" != --context ] &&
    [ "$prev" != -n ] && [ "$prev" != --namespace ]; then
    COMPREPLY=($(compgen -W "build apply diff check delete get wait reconcile suspend resume report tree adopt export create kustomize pull push images mirror verify version help completion $global_flags
      --help --version" -- "$cur"))
    return
  fi
  # --dry-run=VALUE: bash splits the word at '=' (COMP_WORDBREAKS)
  if [ "$cur" = "=" ] && [ "$prev" = --dry-run ]; then
    COMPREPLY=($(compgen -W "none client server" -- ""))
    return
  fi
  if [ "$prev" = "=" ] && [ "${COMP_WORDS[COMP_CWORD-2]}" = --dry-run ]; then
    COMPREPLY=($(compgen -W "none client server" -- "$cur"))
    return
  fi
  # The instance's name after the upstream spelling `get instance`
  if [ "$prev" = instance ] && [[ "$cur" != -* ]]; then
    COMPREPLY=($(compgen -W "$(kubectl get fluxinstances -A -o jsonpath='{.items[*].metadata.name}' 2>/dev/null)" -- "$cur"))
    return
  fi
  case "$prev" in
    -o|--output)
      if [ "$command" = apply ]; then
        COMPREPLY=($(compgen -W "json" -- "$cur"))
      elif [ "$command" = delete ]; then
        COMPREPLY=($(compgen -W "json" -- "$cur"))
      elif [ "$command" = check ]; then
        COMPREPLY=($(compgen -W "table json" -- "$cur"))
      elif [ "$command" = get ]; then
        COMPREPLY=($(compgen -W "table wide yaml json" -- "$cur"))
      elif [ "$command" = report ]; then
        COMPREPLY=($(compgen -W "table yaml json html" -- "$cur"))
      elif [ "$command" = tree ]; then
        COMPREPLY=($(compgen -W "tree yaml json" -- "$cur"))
      else
        COMPREPLY=($(compgen -W "yaml json" -- "$cur"))
      fi
      return ;;
    --distribution-artifact|--output-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    -f|--filename) _fluxopctl_files; return ;;
    --kubeconfig) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --context)
      COMPREPLY=($(compgen -W "$(kubectl config get-contexts -o name 2>/dev/null)" -- "$cur"))
      return ;;
    --log-format) COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
    --status-auth) COMPREPLY=($(compgen -W "none kubernetes" -- "$cur")); return ;;
    -n|--namespace)
      COMPREPLY=($(compgen -W "$(kubectl get namespaces -o name 2>/dev/null | sed 's|^namespace/||')" -- "$cur"))
      return ;;
    --ca-file) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --certs-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --as|--as-group|--insecure-registry|--request-timeout|--older-than|--source|--revision|--field-manager|--timeout|--lock-timeout|--version|--metrics-addr|--health-addr|--status-addr|--leader-election-lease-duration|--leader-election-renew-deadline|--leader-election-retry-period)
      return ;;
  esac
  case "$command" in
    build)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "-f --filename --distribution-artifact -o --output --output-dir
          --operator --allow-unknown-fields --offline --insecure-registry --ca-file --certs-dir --verify --certificate-identity-regexp --certificate-oidc-issuer --key --trusted-root --request-timeout -v --verbose
          -h --help" -- "$cur"))
      else
        _fluxopctl_files
      fi
      ;;
    apply)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--all-contexts --context-selector --parallel --fail-fast --batch-size --stop-on-failure -f --filename --distribution-artifact --offline --insecure-registry --ca-file --certs-dir --verify --certificate-identity-regexp --certificate-oidc-issuer --key --trusted-root
          --allow-unknown-fields --kubeconfig --context --insecure-skip-tls-verify --request-timeout --field-manager
          --wait --no-wait --timeout --lock-timeout --dry-run -o --output -v --verbose --force --prune-crds --watch
          --from-cluster -n --namespace --metrics-addr --health-addr --status-addr --status-auth --status-insecure --log-format
          --enable-leader-election --leader-election-lease-duration --leader-election-renew-deadline
          --leader-election-retry-period -h --help" \
          -- "$cur"))
      else
        _fluxopctl_files
      fi
      ;;
    diff)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--all-contexts --context-selector --parallel --fail-fast -f --filename --distribution-artifact --offline --insecure-registry --ca-file --certs-dir
          --allow-unknown-fields --kubeconfig --context --insecure-skip-tls-verify --request-timeout --field-manager
          --version --prune-crds -o --output --summary -h --help" -- "$cur"))
      else
        _fluxopctl_files
      fi
      ;;
    check)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--all-contexts --context-selector --parallel --fail-fast -f --filename --distribution-artifact --offline --insecure-registry --ca-file --certs-dir
          --allow-unknown-fields --kubeconfig --context --insecure-skip-tls-verify --request-timeout --prune-crds -o --output
          -h --help" -- "$cur"))
      else
        _fluxopctl_files
      fi
      ;;
    delete)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "-f --filename -n --namespace --kubeconfig --context
          --insecure-skip-tls-verify --request-timeout --field-manager -y --yes --silent --keep-crds --wait --no-wait --timeout
          --lock-timeout --dry-run -o --output -h --help" -- "$cur"))
      else
        _fluxopctl_files
      fi
      ;;
    get)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--all-contexts --context-selector --parallel --fail-fast -f --filename -n --namespace --kubeconfig --context --insecure-skip-tls-verify
          --request-timeout -o --output -A --all-namespaces --kind --ready-status -h --help" -- "$cur"))
      else
        _fluxopctl_files
      fi
      ;;
    wait)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--all-contexts --context-selector --parallel --fail-fast -f --filename -n --namespace --kubeconfig --context --insecure-skip-tls-verify
          --request-timeout --timeout -h --help" -- "$cur"))
      else
        _fluxopctl_files
      fi
      ;;
    reconcile)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "-f --filename -n --namespace --kubeconfig --context --insecure-skip-tls-verify
          --request-timeout --field-manager --force --wait --no-wait --timeout --dry-run -h --help" -- "$cur"))
      else
        _fluxopctl_files
      fi
      ;;
    suspend)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--all-contexts --context-selector --parallel --fail-fast -f --filename -n --namespace --kubeconfig --context --insecure-skip-tls-verify
          --request-timeout --field-manager --dry-run -h --help" -- "$cur"))
      else
        _fluxopctl_files
      fi
      ;;
    resume)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--all-contexts --context-selector --parallel --fail-fast -f --filename -n --namespace --kubeconfig --context --insecure-skip-tls-verify
          --request-timeout --field-manager --wait --no-wait --timeout --dry-run -h --help" -- "$cur"))
      else
        _fluxopctl_files
      fi
      ;;
    report)
      COMPREPLY=($(compgen -W "--all-contexts --context-selector --parallel --fail-fast --kubeconfig --context --insecure-skip-tls-verify --request-timeout
        --field-manager -f --filename -n
        --namespace -o --output --write --dry-run --distribution-artifact --offline --insecure-registry --ca-file --certs-dir
        -h --help" -- "$cur"))
      ;;
    tree)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "-n --namespace -o --output --kubeconfig --context --insecure-skip-tls-verify
          --request-timeout -h --help" -- "$cur"))
      else
        COMPREPLY=($(compgen -W "kustomization/ helmrelease/ fluxinstance/ ks hr" -- "$cur"))
        compopt -o nospace 2>/dev/null
      fi
      ;;
    adopt)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--from-cluster -n --namespace --version-range --distribution-artifact --offline
          --insecure-registry --ca-file --certs-dir --kubeconfig --context --insecure-skip-tls-verify --request-timeout
          -h --help" -- "$cur"))
      else
        COMPREPLY=($(compgen -d -- "$cur"))
      fi
      ;;
    kustomize)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "-o --output -h --help" -- "$cur"))
      else
        COMPREPLY=($(compgen -d -- "$cur"))
      fi
      ;;
    pull)
      COMPREPLY=($(compgen -W "--list --prune --older-than --offline --insecure-registry --ca-file --certs-dir --verify --certificate-identity-regexp --certificate-oidc-issuer --key --trusted-root --request-timeout
        -o --output
        -h --help" -- "$cur"))
      ;;
    push)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--source --revision --insecure-registry --ca-file --certs-dir --request-timeout
          --dry-run -h --help" -- "$cur"))
      else
        COMPREPLY=($(compgen -d -- "$cur"))
      fi
      ;;
    images)
      if [[ "$prev" == --variant ]]; then
        COMPREPLY=($(compgen -W "upstream-alpine enterprise-alpine enterprise-distroless
          enterprise-distroless-fips" -- "$cur"))
      elif [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "-f --filename --distribution-artifact --version --variant -o --output
          --allow-unknown-fields --offline --insecure-registry --ca-file --certs-dir --verify --certificate-identity-regexp --certificate-oidc-issuer --key --trusted-root --request-timeout -h
          --help" -- "$cur"))
      else
        _fluxopctl_files
      fi
      ;;
    mirror)
      if [[ "$prev" == --variant ]]; then
        COMPREPLY=($(compgen -W "upstream-alpine enterprise-alpine enterprise-distroless
          enterprise-distroless-fips" -- "$cur"))
      elif [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "-f --filename --distribution-artifact --version --variant --platform
          --dry-run --allow-unknown-fields --offline --insecure-registry --ca-file --certs-dir --verify --certificate-identity-regexp --certificate-oidc-issuer --key --trusted-root --request-timeout
          -h --help" -- "$cur"))
      else
        _fluxopctl_files
      fi
      ;;
    version) COMPREPLY=($(compgen -W "--client --insecure-skip-tls-verify -o --output -h --help" -- "$cur")) ;;
    export) COMPREPLY=($(compgen -W "report resource -h --help" -- "$cur")) ;;
    verify)
      if [ "$prev" = --bundle ] || [ "$prev" = --key ] || [ "$prev" = --trusted-root ] ||
        [ "$prev" = --ca-file ]; then
        COMPREPLY=($(compgen -f -- "$cur"))
      elif [[ "$prev" == --variant ]]; then
        COMPREPLY=($(compgen -W "upstream-alpine enterprise-alpine enterprise-distroless
          enterprise-distroless-fips" -- "$cur"))
      elif [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--bundle --certificate-identity --certificate-identity-regexp
          --certificate-oidc-issuer --certificate-oidc-issuer-regexp --key --trusted-root -f --filename
          --distribution-artifact --version --variant -o --output --allow-unknown-fields --offline
          --insecure-registry --ca-file --certs-dir --request-timeout -h --help" -- "$cur"))
      elif [[ " ${COMP_WORDS[*]} " != *" bundle "* ]] && [ "$COMP_CWORD" -eq 2 ]; then
        COMPREPLY=($(compgen -W "bundle" -- "$cur") $(compgen -f -- "$cur"))
      else
        COMPREPLY=($(compgen -f -- "$cur"))
      fi
      ;;
    create)
      if [ "$prev" = create ]; then
        COMPREPLY=($(compgen -W "secret" -- "$cur"))
      elif [ "$prev" = secret ]; then
        COMPREPLY=($(compgen -W "basic-auth ssh githubapp registry tls proxy sops" -- "$cur"))
      elif [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "-n --namespace --label --annotation --immutable --export --dry-run
          --username --password --password-stdin --server --address --private-key-file --public-key-file
          --knownhosts-file --app-id --app-installation-owner --app-installation-id --app-private-key-file
          --app-base-url --tls-crt-file --tls-key-file --ca-crt-file --age-key-file --gpg-key-file
          --age-key-stdin --gpg-key-stdin --kubeconfig --context --insecure-skip-tls-verify
          --request-timeout --field-manager -h --help" -- "$cur"))
      else
        COMPREPLY=($(compgen -f -- "$cur"))
      fi
      ;;
    help)
      COMPREPLY=($(compgen -W "build apply diff check delete get wait reconcile suspend resume report tree adopt export create
        kustomize pull push images mirror verify version help completion" -- "$cur"))
      ;;
    completion) COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur")) ;;
  esac
  # The global flags are taken after any command too
  if [[ "$cur" == -* ]]; then
    COMPREPLY+=($(compgen -W "$global_flags" -- "$cur"))
  fi
}
complete -F _fluxopctl fluxopctl
