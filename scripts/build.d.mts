// Types of build.mjs, for the TypeScript that imports it (tests, benchmarks).
export declare function buildService(): Promise<void>;
/** Builds dist/console; resolves with esbuild's metafile (the packages in the console's bundle). */
export declare function buildConsole(build: typeof import('esbuild').build): Promise<import('esbuild').Metafile>;
/** `npm start`'s environment variables and node flags (package.json's start script). */
export declare function runtimeSettings(): { env: Record<string, string>; nodeFlags: string[] };
/** The packages the compiled service loads from node_modules rather than from its bundle. */
export declare const RUN_TIME_PACKAGES: string[];
