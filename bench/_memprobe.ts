import { createRequire } from "node:module"; const require = createRequire(import.meta.url);
import { readFileSync } from 'node:fs';
import { prepareIssuance } from './issuance-flow.js';
import { startServiceProcess } from './support.js';
const service = await startServiceProcess(42100);
await prepareIssuance(service);
await new Promise((r) => setTimeout(r, 30000));
console.log('rss', service.rssMiB().toFixed(1), 'startMs', service.startMs.toFixed(0));
const pid = Number(require("node:child_process").execSync("ss -ltnpH sport = :42100").toString().match(/pid=(\d+)/)?.[1]);
console.log('pid', pid);
if (pid) { require("node:fs").writeFileSync("/tmp/mem/smaps", readFileSync(`/proc/${pid}/smaps`, "utf8")); process.kill(pid, "SIGUSR2"); process.kill(pid, "SIGWINCH"); process.kill(pid, "SIGURG"); }
await new Promise((r) => setTimeout(r, 8000));
await service.stop();
