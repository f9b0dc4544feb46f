# contrib/fusebox.bash - bash completion for fusebox (installed by `make install` as
# $(PREFIX)/share/bash-completion/completions/fusebox; or: source contrib/fusebox.bash).
#
# The commands and each command's options are read from the binary's own --help, so the
# completion never lists an option the code does not have. After an option that takes a
# file or folder, and for the arguments, files are completed.

_fusebox() {
    local cur prev cmd
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    if [ "$COMP_CWORD" -eq 1 ]; then
        local cmds
        cmds=$("${COMP_WORDS[0]}" --help 2>/dev/null |
            sed -n '/^commands:/,/^$/s/^  \([a-z-]*\).*/\1/p')
        COMPREPLY=($(compgen -W "$cmds help" -- "$cur"))
        return
    fi
    cmd=${COMP_WORDS[1]}
    if [ "$cmd" = help ]; then
        [ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" --help 2>/dev/null |
            sed -n '/^commands:/,/^$/s/^  \([a-z-]*\).*/\1/p')" -- "$cur"))
        return
    fi
    case $cur in
    -*)
        local opts
        opts=$("${COMP_WORDS[0]}" "$cmd" --help 2>/dev/null | grep -oE -- '(^|[] ,[])--?[a-z][a-z0-9-]*' |
            sed 's/^[] ,[]*//' | sort -u)
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        ;;
    *)
        case $prev in
        --seed | --jobs | -j | --port | --grid | --set | --seeds | --time-scale | --knob | --budget | --levels | --across) ;;
        *) COMPREPLY=($(compgen -f -- "$cur")) ;;
        esac
        ;;
    esac
}
complete -o filenames -o bashdefault -F _fusebox fusebox
