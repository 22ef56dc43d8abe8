// Types of build.mjs, for the TypeScript that imports it (tests).
export declare const OUTFILE: string;
export declare function buildService(): Promise<void>;
export declare function buildConsole(build: typeof import('esbuild').build): Promise<void>;
export declare function buildIsStale(): Promise<boolean>;
