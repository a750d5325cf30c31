#!/usr/bin/env bash
# Makes sure PostgreSQL (127.0.0.1:5432, user postgres, trust) and Redis
# (127.0.0.1:6379) answer: starts them when installed but stopped, installs
# them with apt-get when missing. Databases are created by the programs and
# tests themselves. Safe to run any number of times.
set -euo pipefail

log() { printf 'ensure-services: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
apt_updated=
apt_install() {
  if [ -z "$apt_updated" ]; then as_root apt-get update -qq; apt_updated=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

postgres_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null && psql -h 127.0.0.1 -U postgres -d postgres -Atqc 'select 1' >/dev/null 2>&1; }

if ! postgres_up; then
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    log "installing PostgreSQL"
    apt_install postgresql postgresql-client
  fi
  version=$(ls /etc/postgresql | sort -V | tail -1)
  hba=/etc/postgresql/$version/main/pg_hba.conf
  # The project's machines use trust on loopback; a fresh install does not.
  if ! grep -q '^host all all 127.0.0.1/32 trust' "$hba"; then
    log "allowing trust authentication on loopback in $hba"
    as_root sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\nlocal all all trust' "$hba"
  fi
  log "starting PostgreSQL $version"
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" main restart || as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start
  for _ in $(seq 1 60); do postgres_up && break; sleep 0.5; done
  postgres_up || { log "PostgreSQL did not come up"; exit 1; }
fi

redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

if ! redis_up; then
  if ! command -v redis-server >/dev/null 2>&1; then
    log "installing Redis"
    apt_install redis-server
  fi
  log "starting Redis"
  as_root mkdir -p /var/lib/redis /var/log/redis
  as_root redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/convida.log
  for _ in $(seq 1 40); do redis_up && break; sleep 0.25; done
  redis_up || { log "Redis did not come up"; exit 1; }
fi
log "PostgreSQL and Redis are up"
