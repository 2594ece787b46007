#!/usr/bin/env bash
# Offline validation of infra/ (no Docker engine or cluster needed). Safe for CI:
# each validator that is not installed is skipped with a message. Exit 0 = valid.
#
#   bash infra/validate.sh
#
# Environment:
#   STEPWISE_INFRA_TOOLS      npm prefix for the Node validators
#                             (default: ${XDG_CACHE_HOME:-$HOME/.cache}/stepwise-infra-tools)
#   STEPWISE_VALIDATE_NO_INSTALL=1   never run `npm install` for them (use what is there)
#   STEPWISE_VALIDATE_STRICT=1       treat a skipped validator as a failure
#   KUBECONFORM_SCHEMA_LOCATION      if set and kubeconform is on PATH, also run it
#                                    against that (local) schema location
#
# What runs when available:
#   sh -n / node --check / shellcheck   the image's entrypoint and healthcheck scripts
#   node infra/scripts/validate.mjs     YAML syntax (duplicate keys included), Kubernetes
#                                       schemas (kubernetes-models), Dockerfile lint
#                                       (dockerfile-utils) and cross-file invariants
#   python3 + PyYAML                    YAML syntax, when the Node validators are unavailable
#   yamllint                            YAML style/syntax (Debian: apt-get install yamllint)
#   docker compose / docker-compose     `config` on infra/compose.yaml (Debian: docker-compose)
#   kubectl kustomize                   renders infra/k8s offline
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo" || exit 1

tools="${STEPWISE_INFRA_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/stepwise-infra-tools}"
# Pinned validator versions (npm registry).
tool_pkgs=(yaml@2.9.1 kubernetes-models@5.1.0 dockerfile-utils@0.16.3)

passed=0
failed=0
skipped=0
pass() { passed=$((passed + 1)); echo "  ok   $*"; }
fail() { failed=$((failed + 1)); echo "  FAIL $*"; }
skip() { skipped=$((skipped + 1)); echo "  skip $*"; }
have() { command -v "$1" >/dev/null 2>&1; }
# Runs a command quietly; prints its output only when it fails.
run() {
  local name="$1"
  shift
  local out
  if out="$("$@" 2>&1)"; then
    pass "$name"
  else
    fail "$name"
    printf '%s\n' "$out" | sed 's/^/       /' | tail -40
  fi
}

echo "== scripts"
run "entrypoint.sh: sh -n" sh -n infra/docker/entrypoint.sh
run "validate.sh: bash -n" bash -n infra/validate.sh
if have node; then
  run "healthcheck.mjs: node --check" node --check infra/docker/healthcheck.mjs
  run "validate.mjs: node --check" node --check infra/scripts/validate.mjs
else
  skip "node not installed: JavaScript syntax checks"
fi
if have shellcheck; then
  run "shellcheck" shellcheck infra/docker/entrypoint.sh infra/validate.sh
else
  skip "shellcheck not installed"
fi

echo "== Node validators ($tools)"
tools_ready() { [ -f "$tools/node_modules/yaml/package.json" ] && [ -f "$tools/.versions" ] && [ "$(cat "$tools/.versions")" = "${tool_pkgs[*]}" ]; }
if have node && have npm && ! tools_ready && [ "${STEPWISE_VALIDATE_NO_INSTALL:-0}" != 1 ]; then
  echo "  installing ${tool_pkgs[*]} into $tools"
  mkdir -p "$tools"
  [ -f "$tools/package.json" ] || echo '{"name":"stepwise-infra-tools","private":true}' >"$tools/package.json"
  to=()
  if have timeout; then to=(timeout 300); fi
  if (cd "$tools" && NPM_CONFIG_UPDATE_NOTIFIER=false ${to[@]+"${to[@]}"} npm install --no-audit --no-fund --ignore-scripts --loglevel=error "${tool_pkgs[@]}") >/dev/null 2>&1; then
    echo "${tool_pkgs[*]}" >"$tools/.versions"
  else
    echo "  (npm install failed: registry unreachable? continuing with what is installed)"
  fi
fi
structural_ran=0
if have node; then
  node infra/scripts/validate.mjs --tools "$tools"
  rc=$?
  case "$rc" in
    0) pass "validate.mjs: structural, schema and Dockerfile checks"; structural_ran=1 ;;
    3) skip "validate.mjs: yaml@2 not available (npm install failed or disabled)" ;;
    *) fail "validate.mjs: see the FAIL lines above"; structural_ran=1 ;;
  esac
else
  skip "node not installed: structural checks"
fi

if [ "$structural_ran" = 0 ]; then
  if have python3 && python3 -c 'import yaml' 2>/dev/null; then
    run "YAML parse (PyYAML)" python3 - infra/compose.yaml infra/k8s/*.yaml <<'PY'
import sys, yaml
for path in sys.argv[1:]:
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    print(path, len(docs), "document(s)")
PY
  else
    skip "no YAML parser available (node+yaml or python3+PyYAML)"
  fi
fi

echo "== yamllint"
if have yamllint; then
  run "yamllint infra/compose.yaml infra/k8s" yamllint -s -d '{extends: default, rules: {line-length: disable, document-start: disable, comments: {min-spaces-from-content: 1}, truthy: {check-keys: false}}}' infra/compose.yaml infra/k8s
else
  skip "yamllint not installed (apt-get install yamllint)"
fi

echo "== compose"
compose_cmd=()
if have docker && docker compose version >/dev/null 2>&1; then
  compose_cmd=(docker compose)
elif have docker-compose; then
  compose_cmd=(docker-compose)
fi
if [ "${#compose_cmd[@]}" -gt 0 ]; then
  # `config` only parses, interpolates and validates against the Compose schema;
  # it needs no engine. Run it with the defaults, i.e. without a local env file.
  run "${compose_cmd[*]} -f infra/compose.yaml config" "${compose_cmd[@]}" -f infra/compose.yaml config -q
else
  skip "neither 'docker compose' nor docker-compose installed (apt-get install docker-compose)"
fi

echo "== kubernetes"
if have kubectl; then
  run "kubectl kustomize infra/k8s" kubectl kustomize infra/k8s
else
  skip "kubectl not installed: kustomize render"
fi
if have kubeconform && [ -n "${KUBECONFORM_SCHEMA_LOCATION:-}" ]; then
  manifests=()
  for f in infra/k8s/*.yaml; do
    [ "$(basename "$f")" = kustomization.yaml ] || manifests+=("$f")
  done
  run "kubeconform -strict" kubeconform -strict -summary -schema-location "$KUBECONFORM_SCHEMA_LOCATION" "${manifests[@]}"
else
  skip "kubeconform (needs the binary and a local KUBECONFORM_SCHEMA_LOCATION; it downloads schemas otherwise)"
fi

echo
echo "infra: $passed passed, $failed failed, $skipped skipped"
if [ "$failed" -gt 0 ]; then exit 1; fi
if [ "$skipped" -gt 0 ] && [ "${STEPWISE_VALIDATE_STRICT:-0}" = 1 ]; then
  echo "STEPWISE_VALIDATE_STRICT=1: skipped validators count as failures"
  exit 1
fi
exit 0
