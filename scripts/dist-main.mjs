// dist/main.js, the compiled service's entry (the build adds the shebang that carries `npm start`'s
// runtime settings). It turns on Node's own compile cache before the bundle is loaded: parsing and
// compiling the bundle's JavaScript is otherwise a quarter of the time to the first answer. Node
// writes the cache at exit and checks each entry against its file's content, its own version and
// V8's flags; the build starts the service once so that the first start after it reads a cache too.
// A cache folder it cannot use only means compiling, as without a cache.
import { constants, enableCompileCache } from 'node:module';
import { join } from 'node:path';

// dist/compile-cache, written by the build's warm-up. Node keeps one folder per user id in it; where
// that folder cannot be made (dist/ read-only to a user the image was not warmed up for), the cache
// goes to the data directory, which the service writes anyway, and the second start reads it.
const inDist = enableCompileCache(join(import.meta.dirname, 'compile-cache'));
if (inDist.status === constants.compileCacheStatus.FAILED) {
  enableCompileCache(join(process.env.DATA_DIR || 'data', 'compile-cache'));
}

await import('./service.js');
