# wait_url.sh - sourced by scripts that start `fusebox mock` in the background.
#   wait_url FILE [TRIES]   print the first line of FILE (the URL the mock prints
#                           once it listens), waiting up to TRIES x 50 ms (100)
wait_url() {
    _u=
    for _ in $(seq 1 "${2:-100}"); do
        _u=$(head -n 1 "$1" 2>/dev/null)
        [ -n "$_u" ] && break
        sleep 0.05
    done
    printf '%s' "$_u"
}
