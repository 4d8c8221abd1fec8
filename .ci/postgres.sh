# shellcheck shell=bash
# Private, throw-away PostgreSQL cluster for Keyward's tests. Source this file, then:
#
#   kw_pg_start              # initdb + start on 127.0.0.1:<free port>, create db keyward_test,
#                            # export KEYWARD_TEST_POSTGRES_URL (and KW_PG_PORT, KW_PG_DIR, KW_PG_BIN);
#                            # fsync and synchronous_commit off unless KW_PG_DURABLE=1
#   kw_pg_createdb NAME      # create another database on the same cluster, print its URL
#   kw_pg_stop               # stop the cluster (fast), kill the postmaster if needed, remove its files
#
# As root the server runs as the `postgres` system user (PostgreSQL refuses to run as root);
# as any other user it runs as that user. Authentication is `trust` for user `keyward`, loopback only.
# Nothing here touches a system cluster: the data dir lives in a mktemp dir under /tmp (or KW_PG_TMPDIR, which
# the postgres user must be able to reach) and the port is free.

kw_pg_bindir() {
    local dir
    if [[ -n "${KW_PG_BIN:-}" && -x "${KW_PG_BIN}/pg_ctl" ]]; then
        echo "$KW_PG_BIN"; return 0
    fi
    # Debian keeps the server binaries out of PATH; take the highest installed major version.
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4,4 -n -r); do
        if [[ -x "$dir/pg_ctl" && -x "$dir/initdb" ]]; then echo "$dir"; return 0; fi
    done
    if command -v pg_ctl >/dev/null 2>&1; then dirname "$(command -v pg_ctl)"; return 0; fi
    return 1
}

kw_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Runs a command as the cluster owner.
kw_pg_as_owner() {
    if [[ "$(id -u)" == "0" ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

kw_pg_start() {
    local bin port dir attempt
    unset KW_PG_PORT
    bin="$(kw_pg_bindir)" || { echo "postgres: pg_ctl/initdb not found (install Debian package postgresql)" >&2; return 1; }
    if [[ "$(id -u)" == "0" ]] && ! id postgres >/dev/null 2>&1; then
        echo "postgres: running as root but there is no 'postgres' system user" >&2; return 1
    fi
    # (Callers may run this under `if`, where `set -e` is off: every step checks for itself.)
    dir="$(mktemp -d "${KW_PG_TMPDIR:-/tmp}/keyward-pg.XXXXXX")" && [[ -n "$dir" && -d "$dir" ]] || {
        echo "postgres: mktemp failed" >&2; return 1; }
    mkdir -p "$dir/data" "$dir/sock" || return 1
    if [[ "$(id -u)" == "0" ]]; then chown -R postgres: "$dir" || return 1; fi
    chmod 700 "$dir" || return 1
    KW_PG_DIR="$dir"; KW_PG_BIN="$bin"
    export KW_PG_DIR KW_PG_BIN

    if ! kw_pg_as_owner "$bin/initdb" -D "$dir/data" -A trust -U keyward -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1; then
        # Older clusters / images without C.UTF-8: retry with the plain C locale.
        rm -rf "${dir:?}/data" && mkdir -p "$dir/data" || return 1
        if [[ "$(id -u)" == "0" ]]; then chown postgres: "$dir/data" || return 1; fi
        if ! kw_pg_as_owner "$bin/initdb" -D "$dir/data" -A trust -U keyward -E UTF8 --locale=C >"$dir/initdb.log" 2>&1; then
            echo "postgres: initdb failed:" >&2; cat "$dir/initdb.log" >&2; return 1
        fi
    fi

    # Tests trade durability for speed; the fault scenarios (KW_PG_DURABLE=1) keep PostgreSQL's defaults, since a
    # commit acknowledged before it reached the log would be lost by a crash of PostgreSQL itself.
    local durability="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    [[ "${KW_PG_DURABLE:-0}" == "1" ]] && durability=""
    # A free port can be taken between the probe and the bind: try a few.
    for attempt in 1 2 3 4 5; do
        port="$(kw_free_port)"
        if kw_pg_as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 start \
            -o "-p $port -c listen_addresses=127.0.0.1 -k $dir/sock $durability -c max_connections=200" \
            >"$dir/pg_ctl.log" 2>&1; then
            KW_PG_PORT="$port"; export KW_PG_PORT
            break
        fi
        echo "postgres: start on port $port failed (attempt $attempt):" >&2
        cat "$dir/pg_ctl.log" >&2; tail -n 20 "$dir/postgres.log" >&2 2>/dev/null || true
        kw_pg_as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    done
    if [[ -z "${KW_PG_PORT:-}" ]]; then return 1; fi

    kw_pg_createdb keyward_test >/dev/null || return 1
    KEYWARD_TEST_POSTGRES_URL="postgres://keyward@127.0.0.1:${KW_PG_PORT}/keyward_test"
    export KEYWARD_TEST_POSTGRES_URL
    echo "postgres: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:${KW_PG_PORT} (data ${dir}/data, log ${dir}/postgres.log)"
}

# kw_pg_createdb NAME: creates database NAME (dropping an old one) and prints its URL.
kw_pg_createdb() {
    local name="$1"
    [[ -n "${KW_PG_PORT:-}" && -n "${KW_PG_BIN:-}" ]] || { echo "postgres: not started" >&2; return 1; }
    local psql="$KW_PG_BIN/psql"
    [[ -x "$psql" ]] || psql="psql"
    PGOPTIONS="-c client_min_messages=warning" "$psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$KW_PG_PORT" -U keyward -d postgres \
        -c "DROP DATABASE IF EXISTS \"$name\"" -c "CREATE DATABASE \"$name\" OWNER keyward" >&2 || return 1
    echo "postgres://keyward@127.0.0.1:${KW_PG_PORT}/${name}"
}

kw_pg_stop() {
    local dir="${KW_PG_DIR:-}" pid
    [[ -n "$dir" && -d "$dir" ]] || return 0
    if [[ -f "$dir/data/postmaster.pid" ]]; then
        kw_pg_as_owner "$KW_PG_BIN/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1 || true
    fi
    if [[ -f "$dir/data/postmaster.pid" ]]; then
        pid="$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null || true)"
        if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
            echo "postgres: pg_ctl stop did not finish; killing postmaster $pid" >&2
            kill -TERM "$pid" 2>/dev/null || true
            sleep 2
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    [[ "$dir" == */keyward-pg.* ]] && rm -rf "$dir"
    unset KW_PG_DIR KW_PG_PORT KEYWARD_TEST_POSTGRES_URL
}
