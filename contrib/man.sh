#!/bin/sh
# contrib/man.sh FUSEBOX [SHAREDIR] - write fusebox(1) in roff on stdout, made of the binary's
# own --help texts (the general one, then each command's), so the man page says what the
# code says. SHAREDIR is where `make install` puts the scenario library (FILES section).
# Used by `make man` and `make install`; needs only sh, sed and the built binary.
set -eu
FUSEBOX=${1:?usage: contrib/man.sh FUSEBOX [SHAREDIR]}
SHARE=${2:-/usr/local/share}
version=$("$FUSEBOX" version | sed 's/^fusebox //')

# roff-safe preformatted text: the docs named where make install puts them (docs/x.md is
# SHAREDIR/doc/fusebox/docs/x.md, as the installed binary's --help names them), backslashes as
# \e, - as \- (an ASCII minus, so that options copied from the page work), a leading . or '
# escaped
esc() { sed -e "s|docs/|$SHARE/doc/fusebox/docs/|g" -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

# The commands: the first word of each line under "commands:" in the general help.
commands=$("$FUSEBOX" --help | sed -n '/^commands:/,/^$/p' | sed -n 's/^  \([a-z-]*\).*/\1/p' |
    grep -v '^version$')

cat <<ROFF
.TH FUSEBOX 1 "" "fusebox $version" "User Commands"
.SH NAME
fusebox \\- simulate LLM resilience settings (breakers, retries, fallbacks) in an outage
.SH SYNOPSIS
.B fusebox
.I command
[\\fIoptions\\fR]
.SH DESCRIPTION
.nf
ROFF
"$FUSEBOX" --help | esc
echo ".fi"
echo ".SH COMMANDS"
for c in $commands; do
    echo ".SS fusebox $c"
    echo ".nf"
    "$FUSEBOX" "$c" --help | esc
    echo ".fi"
done
cat <<ROFF
.SH FILES
.TP
.I $SHARE/fusebox/scenarios/
the scenario library, one incident or pattern each (fusebox check $SHARE/fusebox/scenarios/)
.TP
.I $SHARE/doc/fusebox/
the documentation: README.md and docs/*.md (scenario-format.md: every key of a scenario)
.SH EXIT STATUS
0 ok, 1 expectations failed, 2 bad input or usage, 3 inconclusive (live, verdict).
ROFF
