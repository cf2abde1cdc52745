# PostgreSQL for the tests: a throwaway cluster on 127.0.0.1 (port 55432, or the next free one),
# DATABASE_URL exported, stopped and removed when the sourcing shell exits.
# Sourced by .ci/run (runs as root; PostgreSQL itself runs as the `postgres` user).
# An EXIT trap already set by the sourcing shell is kept: ours runs first, then it.
# With DATABASE_URL already set, that server is used and nothing is started.
if [ -z "${DATABASE_URL:-}" ]; then
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }
  RXAGENT_PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  RXAGENT_PGDATA=$(mktemp -d -t pgci.XXXXXX) && chown postgres: "$RXAGENT_PGDATA"
  runuser -u postgres -- "$RXAGENT_PGBIN/initdb" -D "$RXAGENT_PGDATA" --auth-local=peer --auth-host=scram-sha-256 \
    --encoding=UTF8 --no-locale >/dev/null

  rxagent_pg_stop() {
    runuser -u postgres -- "$RXAGENT_PGBIN/pg_ctl" -D "$RXAGENT_PGDATA" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$RXAGENT_PGDATA"
  }
  rxagent_pg_previous_trap=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//" -e "s/'\\\\''/'/g")
  trap "rxagent_pg_stop; ${rxagent_pg_previous_trap:-:}" EXIT

  # 55432 unless another run (or anything else) holds it: then try the next ports.
  RXAGENT_PGPORT=55432
  until runuser -u postgres -- "$RXAGENT_PGBIN/pg_ctl" -D "$RXAGENT_PGDATA" -l "$RXAGENT_PGDATA/server.log" -w \
      -o "-c listen_addresses=127.0.0.1 -p $RXAGENT_PGPORT -k $RXAGENT_PGDATA -c fsync=off" start >/dev/null 2>&1; do
    if [ "$RXAGENT_PGPORT" -ge 55452 ]; then
      echo "postgres.sh: could not start PostgreSQL on ports 55432-55452" >&2
      tail -20 "$RXAGENT_PGDATA/server.log" >&2 || true
      false
    fi
    RXAGENT_PGPORT=$((RXAGENT_PGPORT + 1))
  done
  runuser -u postgres -- "$RXAGENT_PGBIN/psql" -h "$RXAGENT_PGDATA" -p "$RXAGENT_PGPORT" -v ON_ERROR_STOP=1 -q \
    -c "CREATE ROLE app LOGIN PASSWORD 'app'" -c "CREATE DATABASE appdb OWNER app"
  export DATABASE_URL="postgres://app:app@127.0.0.1:$RXAGENT_PGPORT/appdb"
  echo "postgres.sh: PostgreSQL $("$RXAGENT_PGBIN/postgres" --version | awk '{print $3}') at 127.0.0.1:$RXAGENT_PGPORT"
fi
