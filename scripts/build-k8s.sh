#!/usr/bin/env bash
# Build kube-apiserver, kube-controller-manager and kubectl at a pinned Kubernetes version from
# the Go module proxy, into "$OUT" (default: the user's cache directory, one folder per version).
#
# k8s.io/kubernetes cannot be `go install`ed directly: its go.mod replaces every k8s.io staging
# module with ./staging/src/... . A tiny wrapper module requires k8s.io/kubernetes and replaces
# each staging module with its published v0.<minor>.<patch> twin instead.
set -euo pipefail
K8S_VERSION="${K8S_VERSION:-1.37.2}"
STAGING_VERSION="v0.${K8S_VERSION#1.}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/cronctl/k8s/v${K8S_VERSION}"
OUT="${OUT:-$CACHE/bin}"
# BUILD_K8S_BINS="kubelet": the real node's kubelet (scripts/cluster up --node real), into the same folder
read -r -a BINS <<<"${BUILD_K8S_BINS:-kube-apiserver kube-controller-manager kubectl}"

have_all() {
  for b in "${BINS[@]}"; do [ -x "$OUT/$b" ] || return 1; done
}
if have_all; then echo "k8s v$K8S_VERSION binaries cached in $OUT"; exit 0; fi

command -v go >/dev/null || { echo "build-k8s: go is not installed (Kubernetes 1.36 needs Go 1.26.x)" >&2; exit 1; }
# Kubernetes 1.36 is built with Go 1.26; a Go 1.27 build runs but serves broken OpenAPI
# ("Extensions":{} keys in /openapi/v2) and `kubectl apply` fails with "failed to download openapi".
gover=$(go env GOVERSION)
case "$gover" in
  go1.26|go1.26.*) ;;
  *) if [ -z "${BUILD_K8S_ANY_GO:-}" ]; then
       echo "build-k8s: $gover found, Kubernetes v$K8S_VERSION needs Go 1.26.x (BUILD_K8S_ANY_GO=1 to try anyway)" >&2
       exit 1
     fi ;;
esac
work="$CACHE/src"
mkdir -p "$work" "$OUT"
# one build at a time (parallel test workers, a second terminal): the others wait, then reuse it
exec 9>"$CACHE/.build.lock"
if ! flock -n 9; then
  echo "build-k8s: another build of v$K8S_VERSION is running; waiting for it" >&2
  flock 9
fi
if have_all; then echo "k8s v$K8S_VERSION binaries cached in $OUT"; exit 0; fi
t_all=$(date +%s)
cd "$work"
modfile_url="${GOPROXY_URL:-https://proxy.golang.org}/k8s.io/kubernetes/@v/v${K8S_VERSION}.mod"
{
  echo "module cronctl.local/k8sbuild"
  echo
  echo "go 1.26"
  echo
  echo "require k8s.io/kubernetes v${K8S_VERSION}"
  echo
  echo "replace ("
  # every staging module named in upstream's replace block, except the sample plugin that is
  # not published and that nothing we build imports
  curl -fsSL "$modfile_url" | sed -n '/^replace (/,/^)/p' | grep -o 'k8s.io/[a-z0-9-]* =>' \
    | awk '{print $1}' | grep -v '^k8s.io/sample-' | while read -r m; do
      echo "	$m => $m $STAGING_VERSION"
    done
  echo ")"
} > go.mod
{
  printf '//go:build tools\n\npackage tools\n\nimport (\n'
  for b in "${BINS[@]}"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$b"; done
  printf ')\n'
} > tools.go
export GOFLAGS=-mod=mod GOTOOLCHAIN=local
echo "build-k8s: resolving modules for k8s v$K8S_VERSION ($(go version))"
go mod tidy -e >/dev/null 2>&1 || true
go get k8s.io/kubernetes@v${K8S_VERSION} >/dev/null
start=$(date +%s)
echo "build-k8s: building ${BINS[*]} (cold: ~7-15 min on 2 cores)"
minor=$(echo "$K8S_VERSION" | cut -d. -f2)
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=v${K8S_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}"
# One `go build` for all three: their ~2,600 packages are scheduled as one graph, so neither core
# idles while a single big package or a link finishes. The compiler's garbage collector runs at a
# quarter of its default frequency (GOGC=400: a cold kubectl build 227 s -> 184 s on 2 cores),
# bounded by GOMEMLIMIT so two compiles at once stay well inside a small machine's memory.
tmp="$OUT/.tmp"   # one build at a time (the lock above): a failed build's leftovers go on the next try
rm -rf "$tmp"; mkdir -p "$tmp"
pkgs=(); for b in "${BINS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
GOGC="${BUILD_K8S_GOGC:-400}" GOMEMLIMIT="${BUILD_K8S_GOMEMLIMIT:-6GiB}" \
  go build -trimpath -ldflags "$ldflags -X k8s.io/client-go/pkg/version.gitVersion=v${K8S_VERSION}" -o "$tmp/" "${pkgs[@]}"
for b in "${BINS[@]}"; do mv "$tmp/$b" "$OUT/$b"; done
rmdir "$tmp"
echo "build-k8s: built in $(( $(date +%s) - start ))s ($(( $(date +%s) - t_all ))s with module download) into $OUT"
