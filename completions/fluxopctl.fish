# fish completion for fluxopctl
set -l commands kustomize version
complete -c fluxopctl -f
complete -c fluxopctl -n "not __fish_seen_subcommand_from $commands" -a kustomize -d 'Render a kustomization directory, as kubectl kustomize does'
complete -c fluxopctl -n "not __fish_seen_subcommand_from $commands" -a version -d 'Print the fluxopctl version'
complete -c fluxopctl -n "not __fish_seen_subcommand_from $commands" -l version -d 'Print the version'
complete -c fluxopctl -n "__fish_seen_subcommand_from kustomize" -s o -l output -x -a 'yaml json' -d 'Output format'
complete -c fluxopctl -n "__fish_seen_subcommand_from kustomize" -a '(__fish_complete_directories)'
