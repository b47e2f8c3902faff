# bash completion for fluxopctl
_fluxopctl() {
  local cur prev command
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  command=${COMP_WORDS[1]}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "build kustomize pull push version --help --version" -- "$cur"))
    return
  fi
  case "$prev" in
    -o|--output) COMPREPLY=($(compgen -W "yaml json" -- "$cur")); return ;;
    --distribution-artifact|--output-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    -f|--filename) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --insecure-registry|--older-than|--source|--revision) return ;;
  esac
  case "$command" in
    build)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "-f --filename --distribution-artifact -o --output --output-dir
          --allow-unknown-fields --offline --insecure-registry -v --verbose -h --help" -- "$cur"))
      else
        COMPREPLY=($(compgen -f -- "$cur"))
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
      COMPREPLY=($(compgen -W "--list --prune --older-than --offline --insecure-registry -o --output
        -h --help" -- "$cur"))
      ;;
    push)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--source --revision --insecure-registry -h --help" -- "$cur"))
      else
        COMPREPLY=($(compgen -d -- "$cur"))
      fi
      ;;
    version) COMPREPLY=($(compgen -W "-h --help" -- "$cur")) ;;
  esac
}
complete -F _fluxopctl fluxopctl
