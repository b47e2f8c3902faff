# fish completion for fluxopctl
set -l commands build kustomize version
complete -c fluxopctl -f
complete -c fluxopctl -n "not __fish_seen_subcommand_from $commands" -a build -d 'Render a FluxInstance into the Flux installation it describes'
complete -c fluxopctl -n "not __fish_seen_subcommand_from $commands" -a kustomize -d 'Render a kustomization directory, as kubectl kustomize does'
complete -c fluxopctl -n "not __fish_seen_subcommand_from $commands" -a version -d 'Print the fluxopctl version'
complete -c fluxopctl -n "not __fish_seen_subcommand_from $commands" -l version -d 'Print the version'
complete -c fluxopctl -n "__fish_seen_subcommand_from kustomize" -s o -l output -x -a 'yaml json' -d 'Output format'
complete -c fluxopctl -n "__fish_seen_subcommand_from kustomize" -a '(__fish_complete_directories)'
complete -c fluxopctl -n "__fish_seen_subcommand_from build" -s f -l filename -r -F -d 'FluxInstance file'
complete -c fluxopctl -n "__fish_seen_subcommand_from build" -l distribution-artifact -x -a '(__fish_complete_directories)' -d 'Flux distribution directory'
complete -c fluxopctl -n "__fish_seen_subcommand_from build" -s o -l output -x -a 'yaml json' -d 'Output format'
complete -c fluxopctl -n "__fish_seen_subcommand_from build" -l output-dir -x -a '(__fish_complete_directories)' -d 'Write one file per object'
complete -c fluxopctl -n "__fish_seen_subcommand_from build" -l allow-unknown-fields -d 'Warn about unknown fields instead of failing'
complete -c fluxopctl -n "__fish_seen_subcommand_from build" -s v -l verbose -d 'Print the revision'
complete -c fluxopctl -n "__fish_seen_subcommand_from build" -F
