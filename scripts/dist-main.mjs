// dist/main.js, the compiled service's entry (the build adds the shebang that carries `npm start`'s
// runtime settings). It turns on Node's own compile cache before the bundle is loaded: parsing and
// compiling the bundle's JavaScript is otherwise a quarter of the time to the first answer. Node
// writes the cache at exit and checks each entry against its file's content, its own version and
// V8's flags; the build starts the service once so that the first start after it reads a cache too.
// A cache folder it cannot use only means compiling, as without a cache.
import { constants, enableCompileCache } from 'node:module';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';

// V8 tiers a function up to its optimizing compilers (Maglev, then TurboFan) once it has run a few
// hundred times, and start-up alone does that to about a hundred functions (route registration,
// schema construction): the compilers' own code and working memory then stay resident in a service
// that goes idle. Ten times those counts keep start-up and set-up in the interpreter and baseline
// code while request paths still reach optimized code within the first thousands of requests.
// Measured on the compiled service, idle 30 s after set-up: 79 MiB against 86, with the same CPU per
// issuance flow within the benchmark's noise (bench/start-up.ts, bench/issuance.ts). Set here, before
// the bundle is compiled, and not in the shebang: a kernel before Linux 5.1 reads only its first 127
// bytes. The compile cache is keyed on V8's flags, so the build's warm-up (which runs this file) and
// every start agree.
// V8 drops a function's bytecode once it has not run through six full collections (it is compiled
// again at its next call). Start-up's code (module set-up, route registration, schema construction)
// runs once, and an idle service makes only a few full collections: two let it go in that time.
// Measured on the compiled service idle 30 s after set-up (three starts each): 77.8 MiB against 79.7;
// request paths run at every request, so they keep theirs.
setFlagsFromString(
  '--invocation-count-for-maglev=4000 --invocation-count-for-turbofan=20000 --invocation-count-for-maglev-osr=1000 --invocation-count-for-osr=5000 --bytecode-old-age=2',
);

// dist/compile-cache, written by the build's warm-up. Node keeps one folder per user id in it; where
// that folder cannot be made (dist/ read-only to a user the image was not warmed up for), the cache
// goes to the data directory, which the service writes anyway, and the second start reads it.
const inDist = enableCompileCache(join(import.meta.dirname, 'compile-cache'));
if (inDist.status === constants.compileCacheStatus.FAILED) {
  enableCompileCache(join(process.env.DATA_DIR || 'data', 'compile-cache'));
}

await import('./service.js');
