function __kioskctl_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __kioskctl_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __kioskctl_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __kioskctl_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __kioskctl_parse_tokens -S
    set -l unparsed_tokens (__kioskctl_tokens -pc)
    switch $unparsed_tokens[1]
    case 'kioskctl'
        __kioskctl_parse_subcommand 0 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'ping'
            __kioskctl_parse_subcommand 0 'socket=' 'json' 'version' 'h/help'
        case 'version'
            __kioskctl_parse_subcommand 0 'socket=' 'json' 'version' 'h/help'
        case 'stats'
            __kioskctl_parse_subcommand 0 'socket=' 'json' 'version' 'h/help'
        case 'output-info'
            __kioskctl_parse_subcommand 0 'socket=' 'json' 'connector=' 'version' 'h/help'
        case 'power'
            __kioskctl_parse_subcommand 1 'socket=' 'json' 'connector=' 'version' 'h/help'
        case 'screenshot'
            __kioskctl_parse_subcommand 0 'socket=' 'json' 'o/output=' 'server-path=' 'group-time-ns=' 'connector=' 'version' 'h/help'
        case 'verify'
            __kioskctl_parse_subcommand 0 'socket=' 'json' 'connector=' 'version' 'h/help'
        case 'scene'
            __kioskctl_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'load'
                __kioskctl_parse_subcommand 1 'socket=' 'json' 'yaml=' 'connector=' 'version' 'h/help'
            case 'get'
                __kioskctl_parse_subcommand 0 'socket=' 'json' 'connector=' 'version' 'h/help'
            end
        case 'widget'
            __kioskctl_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'get'
                __kioskctl_parse_subcommand 1 'socket=' 'json' 'version' 'h/help'
            case 'set'
                __kioskctl_parse_subcommand -r 2 'socket=' 'json' 'version' 'h/help'
            end
        case 'data'
            __kioskctl_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'set'
                __kioskctl_parse_subcommand -r 1 'socket=' 'json' 'version' 'h/help'
            case 'get'
                __kioskctl_parse_subcommand -r 1 'socket=' 'json' 'version' 'h/help'
            end
        case 'page'
            __kioskctl_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'show'
                __kioskctl_parse_subcommand 1 'socket=' 'json' 'transition=' 'duration=' 'easing=' 'connector=' 'version' 'h/help'
            end
        case 'animate'
            __kioskctl_parse_subcommand -r 3 'socket=' 'json' 'spring' 'decay' 'duration=' 'easing=' 'stiffness=' 'damping=' 'mass=' 'velocity=' 'deceleration=' 'at=' 'version' 'h/help'
        case 'video'
            __kioskctl_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'play'
                __kioskctl_parse_subcommand 0 'socket=' 'json' 'id=' 'version' 'h/help'
            case 'pause'
                __kioskctl_parse_subcommand 0 'socket=' 'json' 'id=' 'version' 'h/help'
            case 'seek'
                __kioskctl_parse_subcommand 1 'socket=' 'json' 'id=' 'version' 'h/help'
            case 'state'
                __kioskctl_parse_subcommand 0 'socket=' 'json' 'id=' 'version' 'h/help'
            case 'load'
                __kioskctl_parse_subcommand 1 'socket=' 'json' 'id=' 'version' 'h/help'
            end
        case 'web'
            __kioskctl_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'state'
                __kioskctl_parse_subcommand 0 'socket=' 'json' 'id=' 'version' 'h/help'
            case 'reload'
                __kioskctl_parse_subcommand 0 'socket=' 'json' 'id=' 'version' 'h/help'
            case 'navigate'
                __kioskctl_parse_subcommand 1 'socket=' 'json' 'id=' 'version' 'h/help'
            case 'eval'
                __kioskctl_parse_subcommand 1 'socket=' 'json' 'id=' 'version' 'h/help'
            case 'clear-data'
                __kioskctl_parse_subcommand 0 'socket=' 'json' 'version' 'h/help'
            end
        case 'log-level'
            __kioskctl_parse_subcommand 1 'socket=' 'json' 'version' 'h/help'
        case 'plays'
            __kioskctl_parse_subcommand 0 'socket=' 'json' 'since=' 'after=' 'limit=' 'version' 'h/help'
        case 'cache'
            __kioskctl_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'clear'
                __kioskctl_parse_subcommand 0 'socket=' 'json' 'version' 'h/help'
            case 'refresh'
                __kioskctl_parse_subcommand 0 'socket=' 'json' 'url=' 'version' 'h/help'
            end
        case 'raw'
            __kioskctl_parse_subcommand 1 'socket=' 'json' 'version' 'h/help'
        case 'watch'
            __kioskctl_parse_subcommand -r 1 'socket=' 'json' 'version' 'h/help'
        case 'help'
            __kioskctl_parse_subcommand -r 1 'version'
        end
    end
end

function __kioskctl_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __kioskctl_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __kioskctl_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __kioskctl_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__kioskctl_tokens -p)
    if test -z "$(__kioskctl_tokens -t)"
        set -l index (count (__kioskctl_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'kioskctl' -f
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'ping' -d 'Check that kioskd answers.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'version' -d 'Show kioskd\'s version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'stats' -d 'Show frame counters: flips, missed vblanks, engine statistics.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'output-info' -d 'Show the output: device, driver, connector, current and available modes, commit API, rotation, power, and every connector, connected or not.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'power' -d 'Blank or light the output (no flips while off; lighting it redraws the whole screen).'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'screenshot' -d 'Save the frame on screen (read back from the scanout buffer) as PNG.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'verify' -d 'Read one frame back through the output\'s writeback connector and compare it with the composed frame.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'scene' -d 'Load a scene or show the one on screen.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'widget' -d 'Show or change a widget\'s properties.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'data' -d 'Set or show the scene\'s data keys.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'page' -d 'Switch pages.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'animate' -d 'Animate a widget property: basic (duration, easing), spring or decay.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'video' -d 'Play, pause, seek, load or show a video widget.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'web' -d 'Show or reload a web widget\'s page.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'log-level' -d 'Show kioskd\'s log level, or set it.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'plays' -d 'Show proof of play: what each output showed, when and for how long, with the hash of the frame shown.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'cache' -d 'Empty or revalidate the cache of assets named by URL.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'raw' -d 'Send one request line as given and print the reply as received.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'watch' -d 'Subscribe to events and print each as one JSON line until interrupted.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl ping" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl ping" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl ping" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl ping" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl version" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl version" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl version" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl version" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl stats" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl stats" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl stats" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl stats" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl output-info" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl output-info" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl output-info" connector' -l 'connector' -d 'The output to act on (its connector, as output-info lists it) when kioskd drives several; default: the first.' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl output-info" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl output-info" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl power" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl power" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl power" -eq 1' -fka 'on off'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl power" connector' -l 'connector' -d 'The output to act on (its connector, as output-info lists it) when kioskd drives several; default: the first.' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl power" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl power" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl screenshot" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl screenshot" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl screenshot" o output' -l 'output' -s 'o' -d 'Write the PNG to this file.' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl screenshot" server-path' -l 'server-path' -d 'Have kioskd write the PNG to this absolute path.' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl screenshot" group-time-ns' -l 'group-time-ns' -d 'Save the frame shown at the vblank nearest this time on the sync group\'s clock.' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl screenshot" connector' -l 'connector' -d 'The output to act on (its connector, as output-info lists it) when kioskd drives several; default: the first.' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl screenshot" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl screenshot" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl verify" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl verify" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl verify" connector' -l 'connector' -d 'The output to act on (its connector, as output-info lists it) when kioskd drives several; default: the first.' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl verify" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl verify" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl scene" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl scene" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl scene" -eq 1' -fa 'load' -d 'Replace the scene with a file or inline YAML; returns once it is on screen. An invalid one is refused and the current stays.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl scene" -eq 1' -fa 'get' -d 'Show the scene: source, size, pages, current page, data keys, widgets.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl scene load" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl scene load" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl scene load" yaml' -l 'yaml' -d 'The scene as inline YAML instead of a file.' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl scene load" connector' -l 'connector' -d 'The output to act on (its connector, as output-info lists it) when kioskd drives several; default: the first.' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl scene load" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl scene load" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl scene get" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl scene get" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl scene get" connector' -l 'connector' -d 'The output to act on (its connector, as output-info lists it) when kioskd drives several; default: the first.' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl scene get" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl scene get" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl widget" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl widget" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl widget" -eq 1' -fa 'get' -d 'Show a widget\'s properties, type, page and frame.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl widget" -eq 1' -fa 'set' -d 'Change widget properties, named as in the scene file.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl widget get" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl widget get" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl widget get" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl widget get" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl widget set" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl widget set" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl widget set" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl widget set" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl data" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl data" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl data" -eq 1' -fa 'set' -d 'Set data keys; all of them change in one frame.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl data" -eq 1' -fa 'get' -d 'Show data keys and their values (all when none are named).'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl data set" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl data set" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl data set" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl data set" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl data get" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl data get" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl data get" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl data get" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl page" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl page" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl page" -eq 1' -fa 'show' -d 'Show a page, with its own transition or the one given.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl page show" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl page show" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl page show" transition' -l 'transition' -d 'cut, fade, slide-left or slide-right (default: the page\'s own).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl page show" duration' -l 'duration' -d 'Transition seconds (default 0.5).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl page show" easing' -l 'easing' -d 'linear, ease-in, ease-out, ease-in-out or cubic-bezier(x1, y1, x2, y2) (default ease-in-out).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl page show" connector' -l 'connector' -d 'The output to act on (its connector, as output-info lists it) when kioskd drives several; default: the first.' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl page show" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl page show" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl animate" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl animate" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl animate" spring' -l 'spring' -d 'A spring animation.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl animate" decay' -l 'decay' -d 'A decay animation (starts at --velocity and slows down; the target is ignored).'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl animate" duration' -l 'duration' -d 'Basic: seconds (default 0.3).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl animate" easing' -l 'easing' -d 'Basic: linear, ease-in, ease-out, ease-in-out or cubic-bezier(x1, y1, x2, y2).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl animate" stiffness' -l 'stiffness' -d 'Spring stiffness (default 100).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl animate" damping' -l 'damping' -d 'Spring damping (default 10).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl animate" mass' -l 'mass' -d 'Spring mass (default 1).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl animate" velocity' -l 'velocity' -d 'Spring or decay: initial velocity in units per second, one number or comma-separated numbers per value (-800, 120,-40).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl animate" deceleration' -l 'deceleration' -d 'Decay: deceleration per millisecond (default 0.998).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl animate" at' -l 'at' -d 'Start at this time, in milliseconds since 1970-01-01 UTC: the group clock\'s in a sync group (every member starts at the same vblank), the kiosk\'s wall clock otherwise.' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl animate" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl animate" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl video" -eq 1' -fa 'play' -d 'Play (or resume) the video.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl video" -eq 1' -fa 'pause' -d 'Pause the video; it decodes nothing while paused.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl video" -eq 1' -fa 'seek' -d 'Jump to a position; a paused video shows the frame there.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl video" -eq 1' -fa 'state' -d 'Show the state: source, playlist index, state, position, duration, frame counters, error, and why no playlist item plays (waiting).'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl video" -eq 1' -fa 'load' -d 'Replace the playlist with one clip and play it.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video play" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video play" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video play" id' -l 'id' -d 'The video widget\'s id (default: the scene\'s only video widget).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video play" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video play" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video pause" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video pause" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video pause" id' -l 'id' -d 'The video widget\'s id (default: the scene\'s only video widget).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video pause" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video pause" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video seek" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video seek" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video seek" id' -l 'id' -d 'The video widget\'s id (default: the scene\'s only video widget).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video seek" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video seek" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video state" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video state" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video state" id' -l 'id' -d 'The video widget\'s id (default: the scene\'s only video widget).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video state" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video state" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video load" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video load" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video load" id' -l 'id' -d 'The video widget\'s id (default: the scene\'s only video widget).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video load" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl video load" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl web" -eq 1' -fa 'state' -d 'Show the state: url, state, loads, failures, web process exits, refused navigations, frame counters, error.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl web" -eq 1' -fa 'reload' -d 'Load the page again now.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl web" -eq 1' -fa 'navigate' -d 'Show another address in the widget until the scene is loaded again (within its allowed_origins).'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl web" -eq 1' -fa 'eval' -d 'Run a script in the page and print its value (only with web: {allow_eval: true} in the config).'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl web" -eq 1' -fa 'clear-data' -d 'Remove the cookies, storage and caches of every page.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web state" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web state" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web state" id' -l 'id' -d 'The web widget\'s id (default: the scene\'s only web widget).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web state" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web state" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web reload" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web reload" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web reload" id' -l 'id' -d 'The web widget\'s id (default: the scene\'s only web widget).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web reload" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web reload" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web navigate" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web navigate" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web navigate" id' -l 'id' -d 'The web widget\'s id (default: the scene\'s only web widget).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web navigate" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web navigate" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web eval" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web eval" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web eval" id' -l 'id' -d 'The web widget\'s id (default: the scene\'s only web widget).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web eval" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web eval" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web clear-data" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web clear-data" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web clear-data" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl web clear-data" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl log-level" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl log-level" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl log-level" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl log-level" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl plays" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl plays" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl plays" since' -l 'since' -d 'Only records that started at or after this time: seconds since the epoch, or ISO 8601 (2026-11-28T06:00:00Z).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl plays" after' -l 'after' -d 'Only records after this sequence number.' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl plays" limit' -l 'limit' -d 'At most this many records, oldest first (1 to 10000; default 1000). kioskd answers in replies of at most 1 MiB; kioskctl asks again until it has them all (with --json, one reply a line).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl plays" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl plays" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl cache" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl cache" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl cache" -eq 1' -fa 'clear' -d 'Remove every cached asset the scenes on screen do not name; show the bytes and entries freed.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_positional "kioskctl cache" -eq 1' -fa 'refresh' -d 'Revalidate the assets the scenes name now (or only the one given), instead of at their next refresh.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl cache clear" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl cache clear" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl cache clear" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl cache clear" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl cache refresh" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl cache refresh" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl cache refresh" url' -l 'url' -d 'Revalidate only this asset (a URL a scene names).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl cache refresh" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl cache refresh" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl raw" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl raw" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl raw" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl raw" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl watch" socket' -l 'socket' -d 'Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).' -rfka ''
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl watch" json' -l 'json' -d 'Print the raw JSON reply instead of human-readable output.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl watch" version' -l 'version' -d 'Show the version.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl watch" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'kioskctl' -n '__kioskctl_should_offer_completions_for_flags_or_options "kioskctl help" version' -l 'version' -d 'Show the version.'
