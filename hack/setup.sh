#!/usr/bin/env bash
# The one set-up step for system tools. `make test`, `make demo` and .ci/run
# call it. It checks every tool the build, the tests and the demo need and,
# when it runs as root, installs what is missing from Debian's packages with
# apt-get; otherwise it stops at once and prints the command to run.
#
# Usage: hack/setup.sh           check, and install what is missing (as root)
#        hack/setup.sh --check   check only; exit 1 naming what is missing
#        hack/setup.sh --list    print the tools and their Debian packages
#
# Go itself is not installed here (Debian's is older than go.mod needs): the
# script names the version to install instead. kubectl is not a system tool
# here: hack/testbin/build.sh builds one from Go modules when none is on PATH.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# command → Debian package. Add a line when a part needs a new tool.
tools=(
  "make:make"                # the README's commands
  "git:git"                  # go's VCS stamping, document pull
  "gcc:build-essential"      # cgo (the race detector, some modules)
  "shellcheck:shellcheck"    # Promenade's generated scripts are checked by tests
  "openssl:openssl"          # Promenade tests and the benchmark peer check certificates with it
  "tar:tar"                  # Promenade's join-script bundles
  "sha256sum:coreutils"      # Promenade's join-script bundles
  "/usr/bin/time:time"       # make bench reads each process's peak RSS with GNU time (a path: bash's time is a keyword)
  "taskset:util-linux"       # make bench pins both sides of single-core rows to one CPU
  # SIP's service tests: haproxy checks and runs the load balancers' configurations (a path:
  # Debian puts it in /usr/sbin, off a user's PATH), ssh -G parses the jump host's SSH config,
  # curl carries the jump host's power command to the Redfish emulator.
  "/usr/sbin/haproxy:haproxy"
  "/usr/bin/ssh:openssh-client"
  "/usr/bin/curl:curl"
  # Ironic, the provisioning engine behind metal3-operator (internal/localironic runs it per site):
  # ironic-common holds the all-in-one ironic command and ironic-dbsync and pulls python3-ironic.
  # Installing it starts no service (its postinst writes /etc/ironic and starts nothing; there is
  # no init script). The conductor converts qcow2 images to raw with qemu-img; genisoimage builds
  # ISO images.
  "/usr/bin/ironic:ironic-common"
  "/usr/bin/ironic-dbsync:ironic-common"
  "qemu-img:qemu-utils"
  "genisoimage:genisoimage"
  # A real node (`cluster local up --real-nodes`, the demo's target cluster): runc is built with
  # seccomp (cgo against libseccomp's header); the kubelet and kube-proxy program the host's
  # packet filter with iptables (Debian's nftables-backed one) and clear conntrack entries.
  "/usr/include/seccomp.h:libseccomp-dev"
  "/usr/sbin/iptables:iptables"
  "/usr/sbin/conntrack:conntrack"
  # The dashboard's browser tests drive Debian's headless Chromium (internal/test/browser).
  "/usr/bin/chromium:chromium"
)

if [[ "${1:-}" == "--list" ]]; then
  for t in "${tools[@]}"; do printf '%-12s %s\n' "${t%%:*}" "${t#*:}"; done
  exit 0
fi

missing=() pkgs=()
for t in "${tools[@]}"; do
  cmd="${t%%:*}" pkg="${t#*:}"
  # A path names a file (a header need not be executable); a name, a command on PATH.
  if [[ "${cmd}" == /* ]]; then have() { [[ -e "$1" ]]; }; else have() { command -v "$1" >/dev/null 2>&1; }; fi
  if ! have "${cmd}"; then
    missing+=("${cmd}")
    [[ " ${pkgs[*]} " == *" ${pkg} "* ]] || pkgs+=("${pkg}")
  fi
done

# Go: the version go.mod asks for, or newer.
want_go="$(sed -n 's/^go \([0-9.]*\)$/\1/p' go.mod)"
if ! command -v go >/dev/null 2>&1; then
  echo "setup: Go ${want_go} or newer is required and go is not on PATH: install it from the Go project's release archive into /usr/local/go and add /usr/local/go/bin to PATH" >&2
  exit 1
fi
have_go="$(go env GOVERSION)"; have_go="${have_go#go}"
if [[ "$(printf '%s\n%s\n' "${want_go}" "${have_go}" | sort -V | head -1)" != "${want_go}" ]]; then
  echo "setup: go.mod needs Go ${want_go} or newer; $(command -v go) is ${have_go}" >&2
  exit 1
fi

if ((${#missing[@]} == 0)); then
  echo "setup: all system tools present ($(printf '%s ' "${tools[@]%%:*}")and go ${have_go})"
  exit 0
fi

cmdline="apt-get update && apt-get install -y ${pkgs[*]}"
if [[ "${1:-}" == "--check" ]]; then
  echo "setup: missing ${missing[*]}; install with: ${cmdline}" >&2
  exit 1
fi
if [[ "$(id -u)" != 0 ]]; then
  echo "setup: missing ${missing[*]}; run as root (or with sudo): ${cmdline}" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup: missing ${missing[*]} and there is no apt-get here; install the packages ${pkgs[*]} (Debian names) with this system's package manager" >&2
  exit 1
fi
echo "setup: installing ${pkgs[*]} (for ${missing[*]})"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
for cmd in "${missing[@]}"; do
  # A path names a file (a header is not a command), as above.
  if [[ "${cmd}" == /* ]]; then
    [[ -e "${cmd}" ]] && continue
  elif command -v "${cmd}" >/dev/null 2>&1; then
    continue
  fi
  echo "setup: ${cmd} still missing after installing ${pkgs[*]}" >&2
  exit 1
done
echo "setup: installed ${pkgs[*]}"
