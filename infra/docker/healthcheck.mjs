// Container health probe for the Stepwise image (no curl in the slim base).
//   node healthcheck.mjs auto     server /healthz, else worker /healthz (image HEALTHCHECK)
//   node healthcheck.mjs server   server liveness  (/healthz on STEPWISE_HTTP_PORT)
//   node healthcheck.mjs ready    server readiness (/readyz on STEPWISE_HTTP_PORT)
//   node healthcheck.mjs worker   worker liveness  (/healthz on STEPWISE_WORKER_HEALTH_PORT)
// Exits 0 when a probe answers 2xx, 1 otherwise. Probes 127.0.0.1, which both
// processes listen on whether they bind 127.0.0.1 or 0.0.0.0.
const serverPort = Number(process.env.STEPWISE_HTTP_PORT || 3000);
const workerPort = Number(process.env.STEPWISE_WORKER_HEALTH_PORT || 9464);

const probes = {
  server: [[serverPort, '/healthz']],
  ready: [[serverPort, '/readyz']],
  worker: [[workerPort, '/healthz']],
  auto: [
    [serverPort, '/healthz'],
    [workerPort, '/healthz'],
  ],
};

const mode = process.argv[2] || 'auto';
const targets = probes[mode];
if (!targets) {
  console.error(`healthcheck: unknown mode "${mode}" (use ${Object.keys(probes).join(', ')})`);
  process.exit(2);
}

let last = 'no probe ran';
for (const [port, path] of targets) {
  if (!port) continue; // port 0 means that endpoint is disabled
  const url = `http://127.0.0.1:${port}${path}`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(4000) });
    if (res.ok) process.exit(0);
    last = `${url} -> HTTP ${res.status}`;
  } catch (err) {
    last = `${url} -> ${err?.cause?.code ?? err?.name ?? err}`;
  }
}
console.error(`healthcheck (${mode}) failed: ${last}`);
process.exit(1);
