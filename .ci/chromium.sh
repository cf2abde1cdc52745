# --- Chromium for the browser tests (sourced by .ci/run; runs as root) ---
# playwright-core downloads no browser: the tests drive Debian's chromium at /usr/bin/chromium.
command -v chromium >/dev/null ||
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
export RXAGENT_CHROMIUM="${RXAGENT_CHROMIUM:-$(command -v chromium)}"
