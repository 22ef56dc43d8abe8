// Start-up and memory of the compiled service, as `npm start` runs it: time from running `npm start`
// to the first answer, resident memory when idle after set-up, and after 1,000 issuance flows;
// medians of several fresh starts. Each start through `npm start` is followed by one of
// `node dist/main.js` with its settings (the Dockerfile's start, without npm and the build-freshness
// check), timed to its first answer only. Each figure is printed beside its target (idle <= 80 MiB;
// under load <= 200 MiB; first answer <= 300 ms on a machine where `node -e ""` takes 90 ms, so here
// 300/90 times this machine's `node -e ""`, measured before the starts: a loaded machine slows both)
// and the run ends with the calibration line (bench/support.ts), through which two machines compare.
// Idle memory is read twice: 2 s after set-up, and once V8's memory reducer has run. It gives back the
// heap that start-up and set-up grew (the young generation's 8 MiB above all), in a service waiting
// for its next request; its timer first fires about 8 s after start-up and, when set-up's allocations
// are still in its sample, waits another 8 s, so it runs some 8 to 17 s into idleness: 30 s leaves it
// time to finish. (15 s, as this read before, raced it: 76 MiB in some starts, 87 in others.)
// Memory is printed to a tenth of a MiB: the idle target is 1 MiB from where the service stands.
// Run: npx tsx bench/start-up.ts [starts, default 5] [flows, default 1000]   (DB_TYPE=postgres for PostgreSQL)
import { prepareIssuance } from './issuance-flow.js';
import { calibration, median, nodeStartMs, startServiceProcess, throughput } from './support.js';

const starts = Number(process.argv[2] ?? 5);
const flows = Number(process.argv[3] ?? 1000);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const settle = () => pause(2000);
const IDLE_SECONDS = 30;
/** The targets each figure is printed beside; the first answer's is scaled to this machine below. */
const TARGET = { firstAnswerMs: 300, nodeStartMs: 90, idleMiB: 80, afterFlowsMiB: 200 };
const port = () => 41_000 + Math.floor(Math.random() * 1000);

const nodeMs = nodeStartMs(9);
const firstAnswerTarget = (TARGET.firstAnswerMs / TARGET.nodeStartMs) * nodeMs;
const firstAnswer: number[] = [];
const firstAnswerDirect: number[] = [];
const idle: number[] = [];
const idleSettled: number[] = [];
const afterFlows: number[] = [];
console.log(`start-up benchmark: ${starts} fresh starts, ${flows} issuance flows each, database ${process.env.DB_TYPE ?? 'sqlite'}`);
console.log(
  `\`node -e ""\` median ${nodeMs.toFixed(0)} ms: first-answer target here ${firstAnswerTarget.toFixed(0)} ms (${TARGET.firstAnswerMs} ms where it takes ${TARGET.nodeStartMs} ms)`,
);
for (let i = 0; i < starts; i++) {
  const service = await startServiceProcess(port(), undefined, { viaNpmStart: true });
  try {
    const flow = await prepareIssuance(service);
    await settle();
    firstAnswer.push(service.startMs);
    idle.push(service.rssMiB());
    await pause((IDLE_SECONDS - 2) * 1000);
    idleSettled.push(service.rssMiB());
    await throughput(flows, 8, flow.run);
    await settle();
    afterFlows.push(service.rssMiB());
    console.log(
      `start ${i + 1}: first answer ${service.startMs.toFixed(0)} ms (target <= ${firstAnswerTarget.toFixed(0)}), idle ${idle.at(-1)?.toFixed(1)} MiB (after ${IDLE_SECONDS} s ${idleSettled.at(-1)?.toFixed(1)} MiB, target <= ${TARGET.idleMiB}), after ${flows} flows ${afterFlows.at(-1)?.toFixed(1)} MiB (target <= ${TARGET.afterFlowsMiB})`,
    );
  } finally {
    await service.stop();
  }
  const direct = await startServiceProcess(port());
  firstAnswerDirect.push(direct.startMs);
  await direct.stop();
}
const range = (values: number[], digits = 0) =>
  `median ${median(values).toFixed(digits)} (min ${Math.min(...values).toFixed(digits)}, max ${Math.max(...values).toFixed(digits)})`;
const times = (values: number[]) => `${(median(values) / nodeMs).toFixed(1)} times \`node -e ""\``;
console.log(
  `first answer through npm start: ${range(firstAnswer)} ms, ${times(firstAnswer)} (target <= ${firstAnswerTarget.toFixed(0)} ms, ${(TARGET.firstAnswerMs / TARGET.nodeStartMs).toFixed(1)} times)`,
);
console.log(`first answer of node dist/main.js: ${range(firstAnswerDirect)} ms, ${times(firstAnswerDirect)}`);
console.log(`idle RSS 2 s after set-up: ${range(idle, 1)} MiB`);
console.log(`idle RSS ${IDLE_SECONDS} s after set-up: ${range(idleSettled, 1)} MiB (target <= ${TARGET.idleMiB})`);
console.log(`RSS after ${flows} flows: ${range(afterFlows, 1)} MiB (target <= ${TARGET.afterFlowsMiB})`);
console.log(calibration());
