// The Dockerfile's node_modules: `node scripts/image-modules.mjs <folder>` copies into
// <folder>/node_modules only the packages the compiled service loads at run time (and what they
// require); the bundle holds the rest.
import { RUN_TIME_PACKAGES } from './build.mjs';
import { copyRunTimePackages } from './shipped-packages.mjs';

const target = process.argv[2];
if (!target) throw new Error('usage: node scripts/image-modules.mjs <folder>');
copyRunTimePackages(RUN_TIME_PACKAGES, target);
