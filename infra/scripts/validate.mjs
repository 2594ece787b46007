// Offline checks for infra/: YAML syntax, Kubernetes schemas, and the cross-file
// invariants no generic validator knows (grace periods, shared blob volume,
// probes, selectors, env parity between compose and the ConfigMap, Dockerfile shape).
//
//   node infra/scripts/validate.mjs [--tools DIR]
//
// DIR is an npm prefix holding yaml@2 (required), kubernetes-models (optional,
// schema validation) and dockerfile-utils (optional, Dockerfile lint); infra/validate.sh
// prepares it. Exit 0 = all checks passed, 1 = a check failed, 3 = `yaml` unavailable.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const infra = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repo = resolve(infra, '..');
const argTools = process.argv.indexOf('--tools');
const toolsDir = argTools > 0 ? resolve(process.argv[argTools + 1]) : process.env.STEPWISE_INFRA_TOOLS;

let failures = 0;
let passes = 0;
const skipped = [];
const ok = (msg) => {
  passes++;
  console.log(`  ok   ${msg}`);
};
const bad = (msg) => {
  failures++;
  console.log(`  FAIL ${msg}`);
};
const check = (cond, msg) => (cond ? ok(msg) : bad(msg));
const skip = (msg) => {
  skipped.push(msg);
  console.log(`  skip ${msg}`);
};
const rel = (p) => p.slice(repo.length + 1);

// ---------------------------------------------------------------- tool loading
function toolRequire() {
  const bases = [toolsDir && join(toolsDir, 'package.json'), join(repo, 'package.json')].filter(Boolean);
  return bases.map((b) => createRequire(b));
}
function loadCjs(name) {
  for (const req of toolRequire()) {
    try {
      return req(name);
    } catch {
      /* try next */
    }
  }
  return undefined;
}
const YAML = loadCjs('yaml');
if (!YAML) {
  console.log('yaml@2 is not installed (pass --tools DIR with it installed); cannot run the structural checks.');
  process.exit(3);
}
const dockerfileUtils = loadCjs('dockerfile-utils');
const k8sModelsDir = toolsDir && join(toolsDir, 'node_modules', 'kubernetes-models');
const haveK8sModels = !!k8sModelsDir && existsSync(join(k8sModelsDir, 'package.json'));

function parseAll(file) {
  const text = readFileSync(file, 'utf8');
  const docs = YAML.parseAllDocuments(text, { merge: true, uniqueKeys: true, prettyErrors: true });
  const errors = docs.flatMap((d) => [...d.errors, ...d.warnings]);
  if (errors.length) {
    bad(`${rel(file)} parses as YAML: ${errors.map((e) => e.message).join('; ')}`);
    return [];
  }
  ok(`${rel(file)} parses as YAML (${docs.length} document${docs.length === 1 ? '' : 's'})`);
  return docs.map((d) => d.toJS({ maxAliasCount: 100 })).filter((d) => d != null);
}

// Compose duration ("30s", "1m30s", "1h") to seconds.
function durationSeconds(v) {
  if (typeof v === 'number') return v;
  let total = 0;
  const re = /(\d+(?:\.\d+)?)(ms|us|ns|h|m|s)/g;
  let m;
  let seen = '';
  while ((m = re.exec(String(v)))) {
    seen += m[0];
    total += Number(m[1]) * { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, ns: 1e-9 }[m[2]];
  }
  return seen === String(v) ? total : NaN;
}

// ------------------------------------------------------------------- compose
console.log('compose.yaml');
const composeFile = join(infra, 'compose.yaml');
const [compose] = parseAll(composeFile);
const composeEnv = {};
if (compose) {
  const s = compose.services ?? {};
  for (const name of ['postgres', 'redis', 'mcp-server', 'worker']) check(s[name], `service ${name} is defined`);
  check(/^postgres:16/.test(s.postgres?.image ?? ''), 'postgres uses postgres:16');
  check(/pg_isready/.test(JSON.stringify(s.postgres?.healthcheck?.test ?? '')), 'postgres healthcheck uses pg_isready');
  check(/^redis:7/.test(s.redis?.image ?? ''), 'redis uses redis:7');
  check(s.redis?.healthcheck?.test, 'redis has a healthcheck');
  check((s.redis?.command ?? []).join(' ').includes('noeviction'), 'redis runs with maxmemory-policy noeviction (BullMQ)');
  const pgVol = (s.postgres?.volumes ?? []).find((v) => String(v).endsWith(':/var/lib/postgresql/data'));
  check(pgVol && compose.volumes && String(pgVol).split(':')[0] in compose.volumes, 'postgres data is on a named volume');

  for (const app of ['mcp-server', 'worker']) {
    const svc = s[app] ?? {};
    const env = svc.environment ?? {};
    composeEnv[app] = env;
    check(svc.build?.dockerfile === 'infra/docker/Dockerfile' && svc.build?.context === '..', `${app} builds infra/docker/Dockerfile from the repo root`);
    if (app === 'worker') check(svc.image && svc.image === s['mcp-server']?.image, 'worker uses the same image as mcp-server');
    for (const dep of ['postgres', 'redis'])
      check(svc.depends_on?.[dep]?.condition === 'service_healthy', `${app} waits for ${dep} to be healthy`);
    for (const key of ['DATABASE_URL', 'REDIS_URL', 'STEPWISE_QUEUE_PREFIX', 'LOG_LEVEL', 'STEPWISE_DATA_DIR', 'STEPWISE_LEASE_MS'])
      check(env[key] !== undefined, `${app} sets ${key}`);
    check(/^postgres(ql)?:\/\//.test(env.DATABASE_URL ?? '') && (env.DATABASE_URL ?? '').includes('@postgres:'), `${app} DATABASE_URL points at the postgres service`);
    check((env.REDIS_URL ?? '').startsWith('redis://redis:'), `${app} REDIS_URL points at the redis service`);
    const dataMount = (svc.volumes ?? []).find((v) => String(v).split(':')[1] === env.STEPWISE_DATA_DIR);
    check(dataMount && String(dataMount).split(':')[0] === 'stepwise-data', `${app} mounts the shared stepwise-data volume at STEPWISE_DATA_DIR`);
    check(svc.healthcheck?.test, `${app} has a healthcheck`);
  }
  const server = s['mcp-server'] ?? {};
  check(server.environment?.STEPWISE_HTTP_HOST === '0.0.0.0', 'mcp-server binds 0.0.0.0 inside the container');
  check(
    String(server.environment?.STEPWISE_ALLOWED_HOSTS ?? '').split(',').includes('127.0.0.1'),
    'mcp-server STEPWISE_ALLOWED_HOSTS includes 127.0.0.1 (the healthcheck Host)',
  );
  check((server.ports ?? []).some((p) => String(p).endsWith(':3000')), 'mcp-server publishes container port 3000');
  check(JSON.stringify(server.healthcheck?.test ?? '').includes('ready'), 'mcp-server healthcheck probes /readyz');
  const worker = s.worker ?? {};
  check(worker.deploy?.replicas === 2, 'worker runs 2 replicas');
  check(JSON.stringify(worker.healthcheck?.test ?? '').includes('worker'), 'worker healthcheck probes the worker health port');
  check(Number(worker.environment?.STEPWISE_WORKER_HEALTH_PORT) > 0, 'worker enables its health endpoint (the app default is 0 = off)');
  const graceMs = Number(worker.environment?.STEPWISE_SHUTDOWN_GRACE_MS);
  const stopS = durationSeconds(worker.stop_grace_period);
  check(
    graceMs > 0 && stopS * 1000 >= graceMs + 5000,
    `worker stop_grace_period (${worker.stop_grace_period}) exceeds STEPWISE_SHUTDOWN_GRACE_MS (${graceMs} ms) by >= 5 s`,
  );
  // Secrets: any password-ish value must come from ${VAR:-default} interpolation.
  const raw = readFileSync(composeFile, 'utf8');
  const literal = raw
    .split('\n')
    .filter((l) => !l.trim().startsWith('#') && /(PASSWORD|SECRET|TOKEN|API_KEY)\s*:/.test(l) && !/\$\{[A-Z_]+(:-[^}]*)?\}/.test(l));
  check(literal.length === 0, `no literal secrets in compose.yaml${literal.length ? `: ${literal.join(' | ')}` : ''}`);
}

// ---------------------------------------------------------------- kubernetes
console.log('k8s/');
const k8sDir = join(infra, 'k8s');
const objects = [];
for (const f of readdirSync(k8sDir).filter((f) => /\.ya?ml$/.test(f)).sort()) {
  for (const doc of parseAll(join(k8sDir, f))) objects.push({ file: f, doc });
}
const kustomization = objects.find((o) => o.doc.kind === 'Kustomization');
const resources = objects.filter((o) => o.doc.kind !== 'Kustomization');
const find = (kind, name) => resources.find((o) => o.doc.kind === kind && o.doc.metadata?.name === name)?.doc;

for (const { file, doc } of resources) {
  const id = `${file}: ${doc.kind}/${doc.metadata?.name}`;
  check(doc.apiVersion && doc.kind && doc.metadata?.name, `${id} has apiVersion, kind and metadata.name`);
  if (doc.kind !== 'Namespace') check(doc.metadata?.namespace === 'stepwise', `${id} is in namespace stepwise`);
}

if (haveK8sModels) {
  for (const { file, doc } of resources) {
    const [group, version] = doc.apiVersion.includes('/') ? doc.apiVersion.split('/') : [null, doc.apiVersion];
    const modPath = join(k8sModelsDir, ...(group ? [group, version] : [version]), `${doc.kind}.js`);
    const id = `${file}: ${doc.kind}/${doc.metadata?.name}`;
    if (!existsSync(modPath)) {
      bad(`${id}: no schema for ${doc.apiVersion} ${doc.kind}`);
      continue;
    }
    const Model = (await import(pathToFileURL(modPath).href))[doc.kind];
    try {
      new Model(doc).validate();
      ok(`${id} matches the ${doc.apiVersion} schema`);
    } catch (e) {
      bad(`${id} schema: ${String(e.message).split('\n').slice(0, 5).join('; ')}`);
    }
  }
} else {
  skip('Kubernetes schema validation (kubernetes-models not installed)');
}

if (kustomization) {
  const listed = new Set(kustomization.doc.resources ?? []);
  for (const f of new Set(resources.map((o) => o.file)))
    if (f !== 'secret.template.yaml') check(listed.has(f), `kustomization.yaml lists ${f}`);
  check(!listed.has('secret.template.yaml'), 'kustomization.yaml leaves out the secret template');
  for (const f of listed) check(existsSync(join(k8sDir, f)), `kustomization resource ${f} exists`);
}

const cm = find('ConfigMap', 'stepwise-config');
const secret = find('Secret', 'stepwise-secrets');
check(cm, 'ConfigMap stepwise-config exists');
check(secret, 'Secret template stepwise-secrets exists');
if (secret) {
  const vals = Object.values({ ...(secret.stringData ?? {}), ...(secret.data ?? {}) });
  check(vals.length > 0 && vals.every((v) => /REPLACE|CHANGE_ME|PLACEHOLDER/i.test(String(v))), 'Secret template holds placeholder values only');
  for (const key of ['DATABASE_URL', 'REDIS_URL']) check(key in (secret.stringData ?? {}), `Secret template defines ${key}`);
}
const pvc = find('PersistentVolumeClaim', 'stepwise-data');
check(pvc?.spec?.accessModes?.includes('ReadWriteMany'), 'data PVC is ReadWriteMany');
check(/S3/.test(readFileSync(join(k8sDir, 'data-pvc.yaml'), 'utf8')), 'data PVC notes the S3-compatible alternative');
check(/managed services?/.test(readFileSync(join(k8sDir, 'namespace.yaml'), 'utf8')), 'manifests note that Postgres and Redis are managed services');

function checkDeployment(name, { role, readyPath, livePath }) {
  const d = find('Deployment', name);
  check(d, `Deployment ${name} exists`);
  if (!d) return undefined;
  const pod = d.spec?.template?.spec ?? {};
  const c = pod.containers?.[0] ?? {};
  const labels = d.spec?.template?.metadata?.labels ?? {};
  const sel = d.spec?.selector?.matchLabels ?? {};
  check(Object.entries(sel).every(([k, v]) => labels[k] === v), `${name} selector matches its pod labels`);
  check(JSON.stringify(c.args ?? c.command) === JSON.stringify([role]), `${name} runs the "${role}" role`);
  check(pod.securityContext?.runAsNonRoot === true && pod.securityContext?.runAsUser > 0, `${name} runs as non-root`);
  check(c.securityContext?.allowPrivilegeEscalation === false, `${name} forbids privilege escalation`);
  const refs = (c.envFrom ?? []).map((e) => e.configMapRef?.name ?? e.secretRef?.name);
  check(refs.includes('stepwise-config') && refs.includes('stepwise-secrets'), `${name} takes env from the ConfigMap and the Secret`);
  const portNames = new Set((c.ports ?? []).map((p) => p.name));
  for (const [probe, path] of [
    ['readinessProbe', readyPath],
    ['livenessProbe', livePath],
  ]) {
    const p = c[probe]?.httpGet;
    check(p?.path === path && portNames.has(p.port), `${name} ${probe} is GET ${path} on a declared port`);
  }
  const claim = (pod.volumes ?? []).find((v) => v.persistentVolumeClaim)?.persistentVolumeClaim?.claimName;
  const vname = (pod.volumes ?? []).find((v) => v.persistentVolumeClaim)?.name;
  const mount = (c.volumeMounts ?? []).find((m) => m.name === vname);
  check(claim === pvc?.metadata?.name && mount?.mountPath === cm?.data?.STEPWISE_DATA_DIR, `${name} mounts the data PVC at STEPWISE_DATA_DIR`);
  if (c.securityContext?.readOnlyRootFilesystem)
    check((c.volumeMounts ?? []).some((m) => m.mountPath === '/tmp'), `${name} has a writable /tmp with a read-only root`);
  check(c.resources?.requests?.cpu, `${name} requests CPU`);
  return d;
}
const serverDep = checkDeployment('stepwise-mcp-server', { role: 'server', readyPath: '/readyz', livePath: '/healthz' });
const workerDep = checkDeployment('stepwise-worker', { role: 'worker', readyPath: '/healthz', livePath: '/healthz' });

const svc = find('Service', 'stepwise-mcp-server');
if (svc && serverDep) {
  const labels = serverDep.spec.template.metadata.labels;
  check(Object.entries(svc.spec.selector ?? {}).every(([k, v]) => labels[k] === v), 'Service selects the mcp-server pods');
  const names = new Set(serverDep.spec.template.spec.containers[0].ports.map((p) => p.name));
  check(svc.spec.ports.every((p) => names.has(p.targetPort) || Number(p.targetPort) === 3000), 'Service targets the server port');
} else bad('Service stepwise-mcp-server exists');

if (workerDep) {
  const graceMs = Number(cm?.data?.STEPWISE_SHUTDOWN_GRACE_MS);
  const tgps = workerDep.spec.template.spec.terminationGracePeriodSeconds;
  check(graceMs > 0 && tgps * 1000 >= graceMs + 5000, `worker terminationGracePeriodSeconds (${tgps}s) exceeds STEPWISE_SHUTDOWN_GRACE_MS (${graceMs} ms) by >= 5 s`);
  const hpa = resources.find((o) => o.doc.kind === 'HorizontalPodAutoscaler')?.doc;
  check(hpa?.spec?.scaleTargetRef?.kind === 'Deployment' && hpa.spec.scaleTargetRef.name === 'stepwise-worker', 'HPA targets the worker Deployment');
  check(hpa?.spec?.metrics?.some((m) => m.resource?.name === 'cpu'), 'HPA scales on CPU');
  check(workerDep.spec.replicas === undefined, 'worker Deployment leaves replicas to the HPA');
  const labels = workerDep.spec.template.metadata.labels;
  const pdb = resources.find((o) => o.doc.kind === 'PodDisruptionBudget' && o.doc.metadata.name === 'stepwise-worker')?.doc;
  check(pdb && Object.entries(pdb.spec.selector.matchLabels).every(([k, v]) => labels[k] === v), 'worker PodDisruptionBudget selects the worker pods');
  check(Number(cm?.data?.STEPWISE_WORKER_HEALTH_PORT) > 0 && cm?.data?.STEPWISE_WORKER_HEALTH_HOST === '0.0.0.0', 'worker health endpoint is on and reachable by the kubelet');
  const hp = workerDep.spec.template.spec.containers[0].ports.find((p) => p.name === 'health');
  check(hp && hp.containerPort === Number(cm?.data?.STEPWISE_WORKER_HEALTH_PORT), 'worker health containerPort matches STEPWISE_WORKER_HEALTH_PORT');
}
if (serverDep && cm) {
  const port = serverDep.spec.template.spec.containers[0].ports.find((p) => p.name === 'http');
  check(port && port.containerPort === Number(cm.data.STEPWISE_HTTP_PORT), 'server containerPort matches STEPWISE_HTTP_PORT');
  check(cm.data.STEPWISE_HTTP_HOST === '0.0.0.0', 'server binds 0.0.0.0 in the pod');
  // The server applies its Host allow-list to every route, /healthz and /readyz included,
  // and the kubelet's default Host is the pod IP: each probe must send an allowed Host.
  const allowed = (cm.data.STEPWISE_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim());
  const c = serverDep.spec.template.spec.containers[0];
  for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
    const host = c[probe]?.httpGet?.httpHeaders?.find((h) => h.name.toLowerCase() === 'host')?.value;
    check(host && allowed.includes(host), `server ${probe} sends a Host header in STEPWISE_ALLOWED_HOSTS (${host})`);
  }
  check(allowed.includes('127.0.0.1'), 'STEPWISE_ALLOWED_HOSTS includes 127.0.0.1 (healthcheck.mjs)');
  check((cm.data.STEPWISE_ALLOWED_HOSTS ?? '').split(',').includes(svc?.metadata?.name), 'STEPWISE_ALLOWED_HOSTS includes the Service name');
}
if (cm && composeEnv['mcp-server'] && composeEnv.worker) {
  // Every setting the apps read in compose must be configurable in Kubernetes too.
  const k8sKeys = new Set([...Object.keys(cm.data ?? {}), ...Object.keys(secret?.stringData ?? {})]);
  const composeKeys = new Set([...Object.keys(composeEnv['mcp-server']), ...Object.keys(composeEnv.worker)]);
  const missing = [...composeKeys].filter((k) => !k8sKeys.has(k));
  check(missing.length === 0, `every compose env var is set in the ConfigMap/Secret${missing.length ? ` (missing: ${missing.join(', ')})` : ''}`);
  for (const k of ['STEPWISE_SHUTDOWN_GRACE_MS', 'STEPWISE_HTTP_PORT', 'STEPWISE_WORKER_HEALTH_PORT', 'STEPWISE_DATA_DIR'])
    check(
      String(cm.data[k]) === String(composeEnv.worker[k] ?? composeEnv['mcp-server'][k]),
      `${k} is the same in compose and the ConfigMap (${cm.data[k]})`,
    );
}

// ---------------------------------------------------------------- Dockerfile
console.log('docker/');
const dockerDir = join(infra, 'docker');
const df = readFileSync(join(dockerDir, 'Dockerfile'), 'utf8');
const lines = df
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const instr = (name) => lines.filter((l) => l.toUpperCase().startsWith(`${name} `));
const stages = instr('FROM').map((l) => l.match(/\bAS\s+(\S+)/i)?.[1]);
check(stages.length >= 3 && stages.at(-1) === 'runtime', `Dockerfile is multi-stage ending in runtime (${stages.join(' -> ')})`);
for (const from of instr('COPY').filter((l) => /--from=/.test(l))) {
  const stage = from.match(/--from=(\S+)/)[1];
  check(stages.includes(stage), `COPY --from=${stage} names a stage`);
}
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
const pinned = pkg.packageManager?.replace(/^pnpm@/, '').split('+')[0];
check(df.includes(`PNPM_VERSION=${pinned}`), `Dockerfile pins pnpm ${pinned} like package.json`);
check(/pnpm fetch/.test(df) && /--frozen-lockfile/.test(df) && /--prod/.test(df), 'Dockerfile fetches with the lockfile and installs prod deps for runtime');
check(/pnpm run build/.test(df), 'Dockerfile builds with turbo (pnpm run build)');
const user = instr('USER').at(-1) ?? '';
check(user && !/^USER\s+(root|0)(:|$)/i.test(user), `runtime runs as a non-root user (${user})`);
check(instr('HEALTHCHECK').length === 1, 'Dockerfile has a HEALTHCHECK');
check(/ENTRYPOINT\s+\["\/usr\/bin\/tini",\s*"--"/.test(df), 'ENTRYPOINT runs under tini');
check(/apt-get install[^\n]*tini/.test(df), 'tini is installed in the runtime stage');
// Every COPY source from the build context must exist and survive the dockerignore.
const ignore = readFileSync(join(dockerDir, 'Dockerfile.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
for (const want of ['**/node_modules', '**/dist', '.git', '**/.turbo', '**/coverage'])
  check(ignore.includes(want), `Dockerfile.dockerignore excludes ${want}`);
const globRe = (p) =>
  new RegExp(
    `^${p
      .replace(/[.+^${}()|[\]]/g, '\\$&')
      .replace(/\*\*\//g, '\u0000')
      .replace(/\*/g, '[^/]*')
      .replace(/\?/g, '[^/]')
      // eslint-disable-next-line no-control-regex -- NUL is the placeholder for `**/` chosen above
      .replace(/\u0000/g, '(.*/)?')}(/.*)?$`,
  );
const ignored = (path) => {
  let out = false;
  for (const p of ignore) {
    const neg = p.startsWith('!');
    if (globRe(neg ? p.slice(1) : p).test(path)) out = !neg;
  }
  return out;
};
for (const copy of instr('COPY').filter((l) => !/--from=/.test(l))) {
  const parts = copy.split(/\s+/).slice(1).filter((p) => !p.startsWith('--'));
  for (const src of parts.slice(0, -1)) {
    if (src === '.') continue;
    check(existsSync(join(repo, src)) && !ignored(src), `COPY source ${src} exists and is in the build context`);
  }
}
check(ignored('node_modules') && ignored('apps/worker/dist') && ignored('infra/README.md') && !ignored('packages/shared/drizzle/0000_init.sql'),
  'dockerignore drops node_modules, dist and infra docs but keeps the migrations');
if (dockerfileUtils) {
  const diags = dockerfileUtils.validate(df);
  const errs = diags.filter((d) => d.severity === dockerfileUtils.ValidationSeverity.ERROR);
  for (const d of diags) console.log(`       dockerfile-utils line ${d.range.start.line + 1}: ${d.message}`);
  check(errs.length === 0, `dockerfile-utils lint: ${errs.length} error(s), ${diags.length - errs.length} warning(s)`);
} else skip('Dockerfile lint (dockerfile-utils not installed)');

console.log(`\nvalidate.mjs: ${passes} passed, ${failures} failed${skipped.length ? `, ${skipped.length} skipped` : ''}`);
process.exit(failures ? 1 : 0);
