// `npm start`: runs the compiled service in this very process (so a signal sent to npm reaches the
// server), rebuilding it first only when a source file changed since the last build.
import { pathToFileURL } from 'node:url';
import { buildIsStale, buildService, OUTFILE } from './build.mjs';

if (await buildIsStale()) await buildService();
await import(pathToFileURL(OUTFILE).href);
