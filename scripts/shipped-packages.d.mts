// Types of shipped-packages.mjs, for the tests that import it.
export interface ShippedPackage {
  folder: string;
  name: string;
  version: string;
  license?: unknown;
}
export declare function bundledPackages(...metafiles: import('esbuild').Metafile[]): ShippedPackage[];
export declare function runTimePackages(roots: string[]): ShippedPackage[];
export declare function checkDeclared(shipped: ShippedPackage[]): void;
export declare function writeSbom(dist: string, shipped: ShippedPackage[], bundleFiles: string[]): void;
export declare function copyRunTimePackages(roots: string[], target: string): void;
