# Sourced by scripts/test: the system services the tests use (Debian packages).
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
[ -x /usr/bin/chromium ] || need+=(chromium)
[ -x /usr/bin/chromedriver ] || need+=(chromium-driver)
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> apt-get install ${need[*]} (used by the tests: a real Redis, a real browser)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "The tests need these Debian packages: ${need[*]}" >&2
    echo "Install them with: sudo apt-get install -y ${need[*]}" >&2
    exit 1
  fi
fi
