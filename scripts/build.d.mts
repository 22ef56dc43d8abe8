// Types of build.mjs, for the TypeScript that imports it (tests, benchmarks).
export declare function buildService(): Promise<void>;
export declare function buildConsole(build: typeof import('esbuild').build): Promise<void>;
/** `npm start`'s environment variables and node flags (package.json's start script). */
export declare function runtimeSettings(): { env: Record<string, string>; nodeFlags: string[] };
